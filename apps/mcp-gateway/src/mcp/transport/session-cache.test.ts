import { SessionCache } from './session-cache';
import type { SessionRecord } from './session-store';

const record = (id: string, principalId = 'alice'): SessionRecord => ({
  id,
  protocolVersion: '2025-11-25',
  principalId,
  clientInfo: undefined,
  clientCapabilities: {},
  logLevel: undefined,
  createdAt: 0,
});

describe('SessionCache', () => {
  it('serves a record for freshMs after it was loaded, then asks again', () => {
    let now = 1000;
    const cache = new SessionCache(100, 10, () => now);
    cache.set(record('s1'), cache.epoch);
    now += 99;
    expect(cache.get('s1', 'alice')?.id).toBe('s1');
    now += 1;
    expect(cache.get('s1', 'alice')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never serves a record to another principal, and forgets on demand', () => {
    const cache = new SessionCache(1000);
    cache.set(record('s1'), cache.epoch);
    expect(cache.get('s1', 'mallory')).toBeUndefined();
    cache.forget('s1');
    expect(cache.get('s1', 'alice')).toBeUndefined();
  });

  it('holds at most maxEntries, dropping the oldest; freshMs 0 holds nothing', () => {
    const cache = new SessionCache(1000, 2);
    for (const id of ['s1', 's2', 's3']) cache.set(record(id), cache.epoch);
    expect([cache.get('s1', 'alice'), cache.get('s2', 'alice')?.id, cache.get('s3', 'alice')?.id]).toEqual([
      undefined,
      's2',
      's3',
    ]);
    const off = new SessionCache(0);
    off.set(record('s1'), off.epoch);
    expect(off.size).toBe(0);
  });

  it('does not store a record loaded before a forget (a load that raced a DELETE)', () => {
    const cache = new SessionCache(1000);
    const epoch = cache.epoch;
    cache.forget('s1'); // the DELETE lands while the load is in flight
    cache.set(record('s1'), epoch);
    expect(cache.get('s1', 'alice')).toBeUndefined();
    cache.set(record('s1'), cache.epoch);
    expect(cache.get('s1', 'alice')?.id).toBe('s1');
  });
});
