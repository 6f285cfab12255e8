import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, runStatusLabel, type RunDetail } from '@dagu-mcp/contracts';
import { RunEventDispatcher } from '../../run-events';
import { progressMessage, waitForRun, type WaitInput, type WaitOutcome } from './execute-wait';

function detail(status: number, attemptId = 'a1'): RunDetail {
  return {
    name: 'd',
    dagRunId: 'r1',
    uri: 'dagu://runs/d/r1',
    attemptId,
    status,
    statusLabel: runStatusLabel(status),
    steps: [],
  };
}

function event(status: number): Parameters<RunEventDispatcher['publish']>[0] {
  return { name: 'd', dagRunId: 'r1', status, statusLabel: runStatusLabel(status), at: new Date().toISOString() };
}

/** A wait over a scripted sequence of `run.get` answers (the last one repeats). */
function setup(script: Array<RunDetail | Error>, overrides: Partial<WaitInput> = {}) {
  const events = new RunEventDispatcher();
  const notifications: ServerNotification[] = [];
  const controller = new AbortController();
  let reads = 0;
  const input: WaitInput = {
    readRun: async () => {
      const answer = script[Math.min(reads, script.length - 1)];
      reads += 1;
      if (answer === undefined || answer instanceof Error) throw answer ?? new Error('no answer');
      return answer;
    },
    watch: events.watch('d'),
    initial: { status: 5, statusLabel: 'queued' },
    isCurrentAttempt: () => true,
    endAtWaiting: true,
    timeoutSeconds: 60,
    signal: controller.signal,
    progressToken: 'tok',
    notify: async (n) => {
      notifications.push(n);
    },
    ...overrides,
  };
  let outcome: WaitOutcome | undefined;
  const done = waitForRun(input).then((o) => {
    outcome = o;
    return o;
  });
  return { events, notifications, controller, done, reads: () => reads, outcome: () => outcome };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('waitForRun (036 §Wait, dagu-model §10)', () => {
  test('reads once at the start and again on each event; ends at a terminal status with the run', async () => {
    const w = setup([detail(1), detail(4)]);
    await jest.advanceTimersByTimeAsync(100);
    expect(w.reads()).toBe(1);
    expect(w.outcome()).toBeUndefined();
    w.events.publish(event(4));
    await jest.advanceTimersByTimeAsync(1);
    expect(await w.done).toEqual({
      kind: 'finished',
      observed: { status: 4, statusLabel: 'succeeded', run: detail(4) },
    });
    expect(w.reads()).toBe(2);
  });

  test.each([2, 3, 4, 6, 8])('status %i is terminal', async (status) => {
    expect((await setup([detail(status)]).done).kind).toBe('finished');
  });

  test('status 7 ends the wait as a waiting checkpoint; for stop it does not', async () => {
    expect(await setup([detail(7)]).done).toMatchObject({ kind: 'waiting', observed: { status: 7, run: detail(7) } });
    const stop = setup([detail(7), detail(3)], { endAtWaiting: false });
    await jest.advanceTimersByTimeAsync(10);
    expect(stop.outcome()).toBeUndefined();
    stop.events.publish(event(3));
    expect((await stop.done).kind).toBe('finished');
  });

  test('timeout: the run keeps its last observed status', async () => {
    const w = setup([detail(1)], { timeoutSeconds: 1 });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await w.done).toEqual({
      kind: 'timeout',
      observed: { status: 1, statusLabel: 'running', run: detail(1) },
      waitedSeconds: 1,
    });
  });

  test('without a progress token a wait ends after at most 50 s', async () => {
    const w = setup([detail(1)], { timeoutSeconds: 300, progressToken: undefined });
    await jest.advanceTimersByTimeAsync(49_000);
    expect(w.outcome()).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await w.done).toMatchObject({ kind: 'timeout', waitedSeconds: 50 });
    expect(w.notifications).toEqual([]);
  });

  test('with a progress token: notifications/progress at least every 10 s, increasing', async () => {
    const w = setup([detail(1)], { timeoutSeconds: 30 });
    await jest.advanceTimersByTimeAsync(30_000);
    expect((await w.done).kind).toBe('timeout');
    const progress = w.notifications.map((n) => (n.method === 'notifications/progress' ? n.params.progress : -1));
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.every((p, i) => p > (progress[i - 1] ?? 0))).toBe(true);
    expect(w.notifications[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'tok', total: 30 },
    });
  });

  test('the client cancel ends the wait (interrupted), never the run', async () => {
    const w = setup([detail(1)]);
    await jest.advanceTimersByTimeAsync(10);
    w.controller.abort();
    expect(await w.done).toMatchObject({ kind: 'interrupted', observed: { status: 1 } });
  });

  test('a retry waits for the new attempt: reads of the old attempt do not count', async () => {
    const w = setup([detail(2, 'old'), detail(1, 'new'), detail(4, 'new')], {
      isCurrentAttempt: (run) => run.attemptId === 'new',
    });
    await jest.advanceTimersByTimeAsync(10);
    expect(w.outcome()).toBeUndefined();
    w.events.publish(event(1));
    await jest.advanceTimersByTimeAsync(10);
    expect(w.outcome()).toBeUndefined();
    w.events.publish(event(4));
    expect(await w.done).toMatchObject({ kind: 'finished', observed: { status: 4, run: { attemptId: 'new' } } });
  });

  test('without events the run is re-read after 5 s (a safety net)', async () => {
    const w = setup([detail(1), detail(4)]);
    await jest.advanceTimersByTimeAsync(5_000);
    expect((await w.done).kind).toBe('finished');
  });

  test('a read failure cuts the wait (waitError); a transient one is retried', async () => {
    const failed = setup([new DaguError('resource_not_found', 'gone')]);
    expect(await failed.done).toEqual({
      kind: 'failed',
      observed: { status: 5, statusLabel: 'queued' },
      error: 'gone',
    });
    const transient = setup([new DaguError('resource_unavailable', 'slow'), detail(4)]);
    await jest.advanceTimersByTimeAsync(5_000);
    expect((await transient.done).kind).toBe('finished');
    const stuck = setup([new DaguError('resource_unavailable', 'slow')], { timeoutSeconds: 2 });
    await jest.advanceTimersByTimeAsync(2_000);
    expect(await stuck.done).toMatchObject({ kind: 'failed', error: 'slow' });
  });
});

describe('progressMessage (progress names the running steps)', () => {
  const step = (name: string, status: number) => ({ name, status, statusLabel: runStatusLabel(status), logUri: '' });
  const run = (steps: RunDetail['steps']): RunDetail => ({
    name: 'd',
    dagRunId: 'r',
    uri: 'dagu://runs/d/r',
    status: 1,
    statusLabel: 'running',
    steps,
  });

  it('lists running and retrying steps', () => {
    const observed = { status: 1, statusLabel: 'running', run: run([step('a', 4), step('b', 1), step('c', 9)]) };
    expect(progressMessage(observed, 10.2)).toBe('Waiting for the run: running after 10 s; running steps: b, c.');
  });

  it('says only the status when no step runs or the run was not read yet', () => {
    expect(progressMessage({ status: 5, statusLabel: 'queued' }, 5)).toBe('Waiting for the run: queued after 5 s.');
    expect(progressMessage({ status: 1, statusLabel: 'running', run: run([step('a', 0)]) }, 5)).toBe(
      'Waiting for the run: running after 5 s.',
    );
  });
});
