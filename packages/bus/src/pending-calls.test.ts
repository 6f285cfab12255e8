import { DaguError } from '@dagu-mcp/contracts';
import { PendingCalls } from './pending-calls';

const timeout = (): DaguError => new DaguError('resource_unavailable', 'late');

describe('PendingCalls', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('resolves a call with its reply and forgets it', async () => {
    const calls = new PendingCalls();
    const reply = calls.register('a', 1000, timeout);
    expect(calls.size).toBe(1);
    expect(calls.resolve('a', { ok: true, data: 1 })).toBe(true);
    await expect(reply).resolves.toEqual({ ok: true, data: 1 });
    expect(calls.size).toBe(0);
  });

  it('rejects a call at its timeout, and a late reply then finds nothing', async () => {
    const calls = new PendingCalls();
    const reply = calls.register('a', 1000, timeout);
    jest.advanceTimersByTime(999);
    expect(calls.size).toBe(1);
    jest.advanceTimersByTime(1);
    await expect(reply).rejects.toMatchObject({ code: 'resource_unavailable', message: 'late' });
    expect(calls.resolve('a', { ok: true, data: 1 })).toBe(false);
  });

  it('a reply clears the timer, so the call never rejects afterwards', async () => {
    const calls = new PendingCalls();
    const reply = calls.register('a', 1000, timeout);
    calls.resolve('a', { ok: false, error: { code: 'conflict', message: 'x' } });
    jest.advanceTimersByTime(5000);
    await expect(reply).resolves.toMatchObject({ ok: false });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects one call, or all of them', async () => {
    const calls = new PendingCalls();
    const a = calls.register('a', 1000, timeout);
    const b = calls.register('b', 1000, timeout);
    const c = calls.register('c', 1000, timeout);
    expect(calls.reject('a', new DaguError('resource_unavailable', 'down'))).toBe(true);
    calls.rejectAll(new DaguError('resource_unavailable', 'closed'));
    await expect(a).rejects.toMatchObject({ message: 'down' });
    await expect(b).rejects.toMatchObject({ message: 'closed' });
    await expect(c).rejects.toMatchObject({ message: 'closed' });
    expect(calls.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('refuses a duplicate id', () => {
    const calls = new PendingCalls();
    const first = calls.register('a', 1000, timeout);
    expect(() => calls.register('a', 1000, timeout)).toThrow('already pending');
    calls.resolve('a', { ok: true, data: null });
    return expect(first).resolves.toEqual({ ok: true, data: null });
  });
});
