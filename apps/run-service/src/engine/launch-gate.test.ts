import { LaunchGate } from './launch-gate';

/** The launch gate: a burst's starts are answered before their runs execute, never for long. */
afterEach(() => jest.useRealTimers());

/** Records the order in which held runs are let through. */
function through(gate: LaunchGate, name: string, log: string[]): void {
  void gate.whenOpen().then(() => log.push(name));
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('a start alone is not held', async () => {
  const gate = new LaunchGate(500);
  const log: string[] = [];
  gate.enter();
  through(gate, 'a', log);
  await settle();
  expect(log).toEqual(['a']);
  gate.leave();
  expect(gate.heldCount).toBe(0);
});

it('holds the runs of starts that overlap until the last start in flight leaves, then lets them go in order', async () => {
  const gate = new LaunchGate(500, 0);
  const log: string[] = [];
  gate.enter();
  gate.enter();
  gate.enter();
  through(gate, 'a', log);
  gate.leave();
  through(gate, 'b', log);
  gate.leave();
  // The last start's run waits behind the held ones.
  through(gate, 'c', log);
  await settle();
  expect(log).toEqual([]);
  expect(gate.heldCount).toBe(3);
  gate.leave();
  await settle();
  expect(log).toEqual(['a', 'b', 'c']);
  expect(gate.heldCount).toBe(0);
});

it('a steady stream of starts cannot hold a run longer than maxHoldMs', async () => {
  jest.useFakeTimers();
  const gate = new LaunchGate(500, 0);
  const log: string[] = [];
  gate.enter();
  gate.enter();
  through(gate, 'a', log);
  jest.advanceTimersByTime(499);
  await Promise.resolve();
  expect(log).toEqual([]);
  jest.advanceTimersByTime(1);
  await Promise.resolve();
  expect(log).toEqual(['a']);
  // The next held run gets its own full hold.
  through(gate, 'b', log);
  jest.advanceTimersByTime(499);
  await Promise.resolve();
  expect(log).toEqual(['a']);
  gate.leave();
  gate.leave();
  await Promise.resolve();
  expect(log).toEqual(['a', 'b']);
});

it('holds nothing when holding is off, and releaseNow lets through what is held', async () => {
  const log: string[] = [];
  const off = new LaunchGate(0);
  off.enter();
  off.enter();
  through(off, 'now', log);
  await settle();
  expect(log).toEqual(['now']);
  const on = new LaunchGate(500);
  on.enter();
  on.enter();
  through(on, 'held', log);
  on.releaseNow();
  await settle();
  expect(log).toEqual(['now', 'held']);
});

it('after the last start leaves, waits quietMs for the next wave of the burst before letting held runs go', async () => {
  jest.useFakeTimers();
  const gate = new LaunchGate(500, 15);
  const log: string[] = [];
  gate.enter();
  gate.enter();
  through(gate, 'a', log);
  gate.leave();
  gate.leave();
  jest.advanceTimersByTime(10);
  await Promise.resolve();
  expect(log).toEqual([]);
  // The next wave arrives within the quiet period: its start is held behind 'a', and the wait starts over.
  gate.enter();
  through(gate, 'b', log);
  jest.advanceTimersByTime(20);
  await Promise.resolve();
  expect(log).toEqual([]);
  gate.leave();
  jest.advanceTimersByTime(14);
  await Promise.resolve();
  expect(log).toEqual([]);
  jest.advanceTimersByTime(1);
  await Promise.resolve();
  await Promise.resolve();
  expect(log).toEqual(['a', 'b']);
  expect(gate.heldCount).toBe(0);
});

it('a start alone after a quiet period is not held, and nothing held means no wait at all', async () => {
  jest.useFakeTimers();
  const gate = new LaunchGate(500, 15);
  const log: string[] = [];
  gate.enter();
  gate.leave();
  // Nothing held: no quiet period, no timer.
  expect(jest.getTimerCount()).toBe(0);
  gate.enter();
  through(gate, 'alone', log);
  await Promise.resolve();
  await Promise.resolve();
  expect(log).toEqual(['alone']);
  gate.leave();
  expect(jest.getTimerCount()).toBe(0);
});
