import type { RunDetail } from '@dagu-mcp/contracts';
import { parseExecuteInput } from './execute-input';
import { TEXT_DONE, answerText, executeSuccess, subscribeSentence, waitText } from './execute-output';
import type { WaitOutcome } from './execute-wait';

const REFERENCES = ['dagu://reference/authoring', 'dagu://reference/tools', 'dagu://reference/notifications'];
const RUN = { dagName: 'nightly-report', dagRunId: '20260701T010000Z' };
const RUN_URI = 'dagu://runs/nightly-report/20260701T010000Z';
const LOGS_URI = `${RUN_URI}/logs`;
const LINKS = [
  { type: 'resource_link', uri: RUN_URI, name: 'dag_run', mimeType: 'application/json' },
  { type: 'resource_link', uri: LOGS_URI, name: 'dag_run_logs', mimeType: 'application/json' },
];
const DETAIL: RunDetail = {
  name: 'nightly-report',
  dagRunId: '20260701T010000Z',
  uri: RUN_URI,
  logsUri: LOGS_URI,
  attemptId: 'a1',
  status: 4,
  statusLabel: 'succeeded',
  steps: [{ name: 's', status: 4, statusLabel: 'succeeded', logUri: `${RUN_URI}/steps/s/logs` }],
};

describe('executeSuccess (036 §Output)', () => {
  test('without wait: fixed text, two resource links, subscribe sentence, no wait keys', () => {
    const request = parseExecuteInput({ action: 'start', name: 'nightly-report' }, {});
    const result = executeSuccess(request, RUN, undefined);
    expect(result.content).toEqual([{ type: 'text', text: 'Dagu execute action completed.' }, ...LINKS]);
    expect(result.structuredContent).toEqual({
      action: 'start',
      targetType: 'dag',
      dagName: 'nightly-report',
      dagRunId: '20260701T010000Z',
      references: REFERENCES,
      runUri: RUN_URI,
      logsUri: LOGS_URI,
      subscribe: subscribeSentence(RUN_URI),
    });
    expect(subscribeSentence(RUN_URI)).toContain(RUN_URI);
    expect(result.isError).toBeUndefined();
  });

  const waitRequest = parseExecuteInput(
    { action: 'retry', name: 'nightly-report', dagRunId: '20260701T010000Z', wait: true },
    {},
  );

  test('finished: completed=true, status, statusLabel, run, the finished sentence; no subscribe', () => {
    const result = executeSuccess(waitRequest, RUN, {
      kind: 'finished',
      observed: { status: 4, statusLabel: 'succeeded', run: DETAIL },
    });
    expect(result.content[0]).toEqual({
      type: 'text',
      text: 'Dagu execute action completed. The run finished with status succeeded.',
    });
    expect(result.content.slice(1)).toEqual(LINKS);
    expect(result.structuredContent).toEqual({
      action: 'retry',
      targetType: 'run',
      dagName: 'nightly-report',
      dagRunId: '20260701T010000Z',
      references: REFERENCES,
      runUri: RUN_URI,
      logsUri: LOGS_URI,
      completed: true,
      status: 4,
      statusLabel: 'succeeded',
      run: DETAIL,
    });
  });

  test('waiting checkpoint (status 7): completed=false with run filled', () => {
    const waiting = { ...DETAIL, status: 7, statusLabel: 'waiting' };
    const result = executeSuccess(waitRequest, RUN, {
      kind: 'waiting',
      observed: { status: 7, statusLabel: 'waiting', run: waiting },
    });
    expect(result.structuredContent).toMatchObject({
      completed: false,
      status: 7,
      statusLabel: 'waiting',
      run: waiting,
    });
    expect(result.structuredContent).not.toHaveProperty('subscribe');
  });

  test.each<[string, WaitOutcome]>([
    ['timeout', { kind: 'timeout', observed: { status: 1, statusLabel: 'running' }, waitedSeconds: 30 }],
    ['interrupted', { kind: 'interrupted', observed: { status: 1, statusLabel: 'running' } }],
    [
      'failed',
      {
        kind: 'failed',
        observed: { status: 1, statusLabel: 'running' },
        error: 'run-service did not answer within 10000 ms.',
      },
    ],
  ])('%s: completed=false, last status, no run, own sentence pointing at runUri', (kind, outcome) => {
    const result = executeSuccess(waitRequest, RUN, outcome);
    const sc = result.structuredContent ?? {};
    expect(sc).toMatchObject({ completed: false, status: 1, statusLabel: 'running', runUri: RUN_URI });
    expect(sc).not.toHaveProperty('run');
    expect(sc).not.toHaveProperty('subscribe');
    expect(sc.waitError === undefined).toBe(kind !== 'failed');
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(text.startsWith(TEXT_DONE)).toBe(true);
    expect(text).toContain(RUN_URI);
    expect(result.isError).toBeUndefined();
  });

  test('the three non-final sentences differ from each other and from the finished one', () => {
    const observed = { status: 5, statusLabel: 'queued' };
    const texts = [
      waitText({ kind: 'timeout', observed, waitedSeconds: 1 }, RUN_URI),
      waitText({ kind: 'interrupted', observed }, RUN_URI),
      waitText({ kind: 'failed', observed, error: 'x' }, RUN_URI),
      waitText({ kind: 'waiting', observed: { ...observed, run: DETAIL } }, RUN_URI),
    ];
    expect(new Set(texts).size).toBe(4);
  });
});

describe('answerText (dagu-model §5 `answer`)', () => {
  const path = '/api/v1/dag-runs/nightly-report/20260701T010000Z/steps/review/human-task';
  const waiting: RunDetail = {
    ...DETAIL,
    status: 7,
    statusLabel: 'waiting',
    steps: [
      {
        name: 'review',
        status: 7,
        statusLabel: 'waiting',
        logUri: `${RUN_URI}/steps/review/logs`,
        answer: { method: 'POST', path, role: 'operator', surface: 'rest_api' },
      },
      ...DETAIL.steps,
    ],
  };

  it('tells how to answer each waiting step, with the body of its kind', () => {
    expect(answerText(waiting)).toBe(
      ` To answer step review: POST ${path} with {"values": {<form field>: <value>}} (role operator or higher, over rest_api).`,
    );
  });

  it('is part of the waiting text, and empty when no step carries an answer', () => {
    const outcome: WaitOutcome = { kind: 'waiting', observed: { status: 7, statusLabel: 'waiting', run: waiting } };
    expect(waitText(outcome, RUN_URI)).toContain(`POST ${path}`);
    expect(answerText(DETAIL)).toBe('');
  });
});
