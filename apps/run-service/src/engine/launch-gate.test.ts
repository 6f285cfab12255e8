import { LaunchGate } from './launch-gate';

/** The launch gate (issue 28): a burst's starts are answered before their runs execute, never for long. */
afterEach(() => jest.useRealTimers());

it('a start alone launches its run at once', () => {
  const gate = new LaunchGate(500);
  const launched: string[] = [];
  gate.enter();
  gate.launch(() => launched.push('a'));
  expect(launched).toEqual(['a']);
  gate.leave();
  expect(gate.heldCount).toBe(0);
});

it('holds the runs of starts that overlap until the last start in flight leaves', () => {
  const gate = new LaunchGate(500);
  const launched: string[] = [];
  gate.enter();
  gate.enter();
  gate.enter();
  gate.launch(() => launched.push('a'));
  gate.leave();
  gate.launch(() => launched.push('b'));
  gate.leave();
  expect(launched).toEqual([]);
  expect(gate.heldCount).toBe(2);
  // The last start's run waits behind the held ones; when it leaves, all go in the order they started.
  gate.launch(() => launched.push('c'));
  expect(launched).toEqual([]);
  gate.leave();
  expect(launched).toEqual(['a', 'b', 'c']);
  expect(gate.heldCount).toBe(0);
});

it('a steady stream of starts cannot hold a run longer than maxHoldMs', () => {
  jest.useFakeTimers();
  const gate = new LaunchGate(500);
  const launched: string[] = [];
  gate.enter();
  gate.enter();
  gate.launch(() => launched.push('a'));
  jest.advanceTimersByTime(499);
  expect(launched).toEqual([]);
  jest.advanceTimersByTime(1);
  expect(launched).toEqual(['a']);
  // The next held run gets its own full hold.
  gate.launch(() => launched.push('b'));
  jest.advanceTimersByTime(499);
  expect(launched).toEqual(['a']);
  gate.leave();
  gate.leave();
  expect(launched).toEqual(['a', 'b']);
});

it('holds nothing when holding is off, and releaseNow launches what is held', () => {
  const off = new LaunchGate(0);
  const launched: string[] = [];
  off.enter();
  off.enter();
  off.launch(() => launched.push('now'));
  expect(launched).toEqual(['now']);
  const on = new LaunchGate(500);
  on.enter();
  on.enter();
  on.launch(() => launched.push('held'));
  on.releaseNow();
  expect(launched).toEqual(['now', 'held']);
});
