import { errorOfToolResult, isRunFinished, runOfToolResult, stepLogOf } from './run-model';

describe('runOfToolResult', () => {
  test('a dagu_execute result without wait names the run, no steps yet (036 §Output)', () => {
    expect(
      runOfToolResult({ content: [], structuredContent: { action: 'start', dagName: 'etl', dagRunId: 'r1' } }),
    ).toEqual({ dagName: 'etl', dagRunId: 'r1', statusLabel: undefined, steps: [] });
  });

  test('a dagu_execute result after a finished wait carries the run (036 §Output)', () => {
    const run = runOfToolResult({
      content: [],
      structuredContent: {
        dagName: 'etl',
        dagRunId: 'r1',
        statusLabel: 'succeeded',
        run: {
          name: 'etl',
          dagRunId: 'r1',
          statusLabel: 'succeeded',
          steps: [{ name: 'a', statusLabel: 'succeeded' }],
        },
      },
    });
    expect(run?.statusLabel).toBe('succeeded');
    expect(run?.steps).toEqual([expect.objectContaining({ name: 'a', statusLabel: 'succeeded' })]);
  });

  test('a dagu_read run result gives the detail under data (021 §Output)', () => {
    const run = runOfToolResult({
      content: [],
      structuredContent: {
        target: 'run',
        data: {
          name: 'etl',
          dagRunId: 'r1',
          statusLabel: 'failed',
          steps: [{ name: 'x', statusLabel: 'failed', error: 'exit 1' }, { bogus: true }],
        },
      },
    });
    expect(run).toMatchObject({ dagName: 'etl', statusLabel: 'failed', steps: [{ name: 'x', error: 'exit 1' }] });
  });

  test.each([
    ['an error result', { isError: true, content: [], structuredContent: { dagName: 'a', dagRunId: 'b' } }],
    ['no structured content', { content: [] }],
    ['no run ids', { content: [], structuredContent: { target: 'dags', data: {} } }],
    ['not an object', 'text'],
  ])('%s names no run', (_what, result) => {
    expect(runOfToolResult(result)).toBeUndefined();
  });
});

describe('isRunFinished', () => {
  test.each([
    ['succeeded', true],
    ['failed', true],
    ['aborted', true],
    ['partially_succeeded', true],
    ['rejected', true],
    ['running', false],
    ['queued', false],
    ['waiting', false],
    [undefined, false],
  ])('%s → %s', (label, finished) => {
    expect(isRunFinished(label)).toBe(finished);
  });
});

describe('stepLogOf and errorOfToolResult', () => {
  test('stdout, then stderr under a marker', () => {
    const result = { structuredContent: { data: { stdoutContent: 'out', stderrContent: 'err\n' } } };
    expect(stepLogOf(result)).toBe('out\n--- stderr ---\nerr\n');
    expect(stepLogOf({ structuredContent: { data: { stdoutContent: 'only\n', stderrContent: '' } } })).toBe('only\n');
  });

  test('the error object message, else the first text', () => {
    expect(errorOfToolResult({ isError: true, structuredContent: { message: 'denied' }, content: [] })).toBe('denied');
    expect(errorOfToolResult({ isError: true, content: [{ type: 'text', text: 'boom' }] })).toBe('boom');
    expect(errorOfToolResult({})).toBeUndefined();
  });
});
