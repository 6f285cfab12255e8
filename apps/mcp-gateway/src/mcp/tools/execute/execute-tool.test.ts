import type { RunDetail } from '@dagu-mcp/contracts';
import { newAttemptFilter } from './execute-tool';

const RUN_URI = 'dagu://runs/nightly/r1';
const REF = { dagName: 'nightly', dagRunId: 'r1', status: 0, statusLabel: 'queued' };
const at = (attemptId: string | undefined): RunDetail => ({
  name: 'nightly',
  dagRunId: 'r1',
  uri: RUN_URI,
  logsUri: `${RUN_URI}/logs`,
  status: 1,
  statusLabel: 'running',
  steps: [],
  ...(attemptId !== undefined ? { attemptId } : {}),
});

describe('newAttemptFilter (retry with wait, dagu-model §10)', () => {
  test('with the prior attempt known: any other attempt counts, also one after a hand-back', () => {
    const filter = newAttemptFilter({ ...REF, attemptId: 'a2' }, 'a1');
    expect([filter(at('a1')), filter(at('a2')), filter(at('a3')), filter(at(undefined))]).toEqual([
      false,
      true,
      true,
      false,
    ]);
  });

  test('without it: only the attempt the retry named; with neither: every read', () => {
    const named = newAttemptFilter({ ...REF, attemptId: 'a2' }, undefined);
    expect([named(at('a1')), named(at('a2'))]).toEqual([false, true]);
    expect(newAttemptFilter(REF, undefined)(at('a1'))).toBe(true);
  });
});
