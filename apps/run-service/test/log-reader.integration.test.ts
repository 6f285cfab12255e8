import { createRunTestEnv, type RunTestEnv } from '../test-fixtures/run-test-env';
import { LogSink } from '../src/store/log-sink';
import { readStream } from '../src/store/log-reader';
import { createLogStreams } from '../src/store/run.repository';
import { readRunLogs, readStepLog } from '../src/read/run-logs';

/**
 * The log store against the real PostgreSQL: a step's output captured line
 * by line without loss, and the reader options of dagu-model §6.
 */
let env: RunTestEnv;
let runId = '';
const LINES = 20_000;

beforeAll(async () => {
  env = await createRunTestEnv('logs');
  runId = await env.start(
    'logs',
    `steps:\n  - {name: big, run: "seq 1 ${LINES}; echo e1 >&2; echo e2 >&2"}\n  - {name: quiet, run: "true"}\n`,
  );
  await env.waitForEnd('logs', runId);
});
afterAll(async () => {
  await env.close();
});

function lines(from: number, to: number): string {
  return Array.from({ length: to - from + 1 }, (_, i) => String(from + i)).join('\n');
}

async function stepLog(query?: Parameters<typeof readStepLog>[1]['query'], stepName = 'big') {
  return readStepLog(env.pool, {
    dagName: 'logs',
    dagRunId: runId,
    stepName,
    ...(query !== undefined ? { query } : {}),
  });
}

describe('step log reader (dagu-model §6)', () => {
  it('defaults to the last 1000 lines of stdout, with stderr alongside', async () => {
    expect(await stepLog()).toMatchObject({
      stdoutContent: lines(LINES - 999, LINES),
      stderrContent: 'e1\ne2',
      lineCount: 1000,
      totalLines: LINES,
      hasMore: true,
    });
  });

  it.each([
    [{ tail: 3 }, lines(LINES - 2, LINES), 3, true],
    [{ tail: 10_000 }, lines(LINES - 9999, LINES), 10_000, true],
    [{ head: 2 }, lines(1, 2), 2, true],
    [{ offset: 500, limit: 3 }, lines(500, 502), 3, true],
    [{ offset: LINES - 1, limit: 5 }, lines(LINES - 1, LINES), 2, false],
    [{ offset: LINES + 1 }, '', 0, false],
    [{ limit: 2 }, lines(1, 2), 2, true],
    [{ offset: 19_500 }, lines(19_500, LINES), 501, false],
  ])('%j', async (query, content, lineCount, hasMore) => {
    const log = await stepLog(query);
    expect(log).toMatchObject({ stdoutContent: content, lineCount, totalLines: LINES, hasMore });
  });

  it('stream=stderr counts stderr and leaves stdout empty', async () => {
    expect(await stepLog({ stream: 'stderr', tail: 1 })).toMatchObject({
      stdoutContent: '',
      stderrContent: 'e2',
      lineCount: 1,
      totalLines: 2,
      hasMore: true,
    });
  });

  it('an empty stream reads as no lines and no more', async () => {
    expect(await stepLog(undefined, 'quiet')).toMatchObject({
      stdoutContent: '',
      lineCount: 0,
      totalLines: 0,
      hasMore: false,
    });
  });

  it('run logs: scheduler log tail and per-step stream flags', async () => {
    const logs = await readRunLogs(env.pool, { dagName: 'logs', dagRunId: runId, tail: 1 });
    expect(logs.schedulerLog).toMatchObject({ lineCount: 1, hasMore: true });
    expect(logs.schedulerLog.content).toMatch(/attempt 1 finished: status=succeeded/);
    expect(logs.stepLogs).toEqual([
      expect.objectContaining({ stepName: 'big', hasStdout: true, hasStderr: true }),
      expect.objectContaining({ stepName: 'quiet', hasStdout: false, hasStderr: false }),
    ]);
  });
});

describe('LogSink', () => {
  it('writes lines of several streams in batches, numbered from where each stream stood', async () => {
    const [a, b] = await createLogStreams(env.pool, 2);
    if (a === undefined || b === undefined) throw new Error('no streams');
    const sink = new LogSink(env.pool, { flushMs: 5, batchLines: 100 });
    const first = sink.stream(a);
    for (let i = 1; i <= 2500; i++) first.append(`a${i}`);
    const second = sink.stream(b, 0);
    second.append('only');
    await sink.flush();
    const read = await readStream(env.pool, a, { kind: 'range', offset: 2499, limit: 5 });
    expect(read).toMatchObject({ content: 'a2499\na2500', totalLines: 2500, hasMore: false });
    const laterSink = new LogSink(env.pool);
    expect(laterSink.stream(a, 2500).append('a2501')).toBe(2501);
    await laterSink.flush();
    expect(await readStream(env.pool, a, { kind: 'tail', count: 2 })).toMatchObject({
      content: 'a2500\na2501',
      totalLines: 2501,
    });
    expect(await readStream(env.pool, b, { kind: 'tail', count: 5 })).toMatchObject({ content: 'only', totalLines: 1 });
  });
});
