import { answerOf, checkpointDetail } from './checkpoint-types';

/** dagu-model §5 `answer`: how to decide a waiting step over REST. */
describe('answerOf / checkpointDetail', () => {
  const address = { dagName: 'etl', dagRunId: 'r-1', stepName: 'review step' };

  it('points at the REST route of each kind, with the role and surface it needs', () => {
    expect(answerOf('human_task', address)).toEqual({
      method: 'POST',
      path: '/api/v1/dag-runs/etl/r-1/steps/review%20step/human-task',
      role: 'operator',
      surface: 'rest_api',
    });
    expect(answerOf('approval', address).path).toBe('/api/v1/dag-runs/etl/r-1/steps/review%20step/approval');
  });

  it('is added to the checkpoint fields only with an address', () => {
    const gate = { kind: 'approval' as const, prompt: 'ok?', input: ['NOTE'], required: [] };
    expect(checkpointDetail(gate)).toEqual({ approval: { prompt: 'ok?', input: ['NOTE'] } });
    expect(checkpointDetail(gate, address)).toMatchObject({ answer: { role: 'operator' } });
  });
});
