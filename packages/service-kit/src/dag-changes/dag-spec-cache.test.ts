import type { DagSpecReply } from '@dagu-mcp/contracts';
import { DagSpecCache } from './dag-spec-cache';

/**
 * The `dag.spec` cache on its own (docs/decisions.md "DAG spec cache"): TTL,
 * cap, the epoch guard against a read that fetched a row before a change,
 * and the bypass while the change subscription is down.
 */
const reply = (name: string, spec = 'steps: []\n'): DagSpecReply => ({
  name,
  mimeType: 'application/yaml',
  spec,
  errors: [],
});

function cacheAt(ttlMs: number, maxEntries?: number): { cache: DagSpecCache; clock: { now: number } } {
  const clock = { now: 1_000 };
  return { cache: new DagSpecCache({ ttlMs, maxEntries, now: () => clock.now }), clock };
}

describe('DagSpecCache', () => {
  it('serves an entry until its TTL has passed, then misses and forgets it', () => {
    const { cache, clock } = cacheAt(5000);
    expect(cache.store('a', reply('a'), cache.epoch())).toBe(true);
    clock.now += 4999;
    expect(cache.get('a')).toEqual(reply('a'));
    clock.now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.stats()).toEqual({ hits: 1, misses: 1, entries: 0, bytes: 0, live: true, outages: 0 });
  });

  it('with TTL 0 stores nothing and always misses', () => {
    const { cache } = cacheAt(0);
    expect(cache.store('a', reply('a'), cache.epoch())).toBe(false);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 0, live: false });
  });

  it('drops the oldest stored entry when full; storing again makes an entry the newest', () => {
    const { cache } = cacheAt(5000, 2);
    cache.store('a', reply('a'), cache.epoch());
    cache.store('b', reply('b'), cache.epoch());
    cache.store('a', reply('a', 'v2'), cache.epoch());
    cache.store('c', reply('c'), cache.epoch());
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.spec).toBe('v2');
    expect(cache.get('c')).toEqual(reply('c'));
    expect(cache.stats().entries).toBe(2);
  });

  it('drops a name on invalidate, and keeps other names', () => {
    const { cache } = cacheAt(5000);
    cache.store('a', reply('a'), cache.epoch());
    cache.store('b', reply('b'), cache.epoch());
    cache.invalidate('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toEqual(reply('b'));
  });

  it('does not store a read that began before an invalidation (it may hold the old row)', () => {
    const { cache } = cacheAt(5000);
    const before = cache.epoch();
    cache.invalidate('a'); // the change lands while the read's query runs
    expect(cache.store('a', reply('a', 'old'), before)).toBe(false);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.store('a', reply('a', 'new'), cache.epoch())).toBe(true);
    expect(cache.get('a')?.spec).toBe('new');
  });

  it('is emptied and bypassed while not live, and reads begun meanwhile do not store once live again', () => {
    const { cache } = cacheAt(5000);
    cache.store('a', reply('a'), cache.epoch());
    cache.setLive(false);
    cache.setLive(false);
    expect(cache.stats().outages).toBe(1);
    expect(cache.get('a')).toBeUndefined();
    const during = cache.epoch();
    expect(cache.store('a', reply('a'), during)).toBe(false);
    cache.setLive(true);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.store('a', reply('a'), during)).toBe(false);
    expect(cache.store('a', reply('a'), cache.epoch())).toBe(true);
    expect(cache.get('a')).toEqual(reply('a'));
  });

  it('keeps the YAML held under maxBytes (UTF-8), dropping the oldest first; a spec bigger than the cap is not stored', () => {
    const cache = new DagSpecCache({ ttlMs: 5000, maxBytes: 10 });
    cache.store('a', reply('a', 'aaaa'), cache.epoch());
    cache.store('b', reply('b', 'bbbb'), cache.epoch());
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 8 });
    cache.store('c', reply('c', 'éé'), cache.epoch()); // 4 bytes: 'a' must go
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.spec).toBe('bbbb');
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 8 });
    expect(cache.store('big', reply('big', 'x'.repeat(11)), cache.epoch())).toBe(false);
    expect(cache.get('c')?.spec).toBe('éé');
    cache.invalidate('b');
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 4 });
  });

  it('refuses a negative TTL and a cap below 1', () => {
    expect(() => new DagSpecCache({ ttlMs: -1 })).toThrow(RangeError);
    expect(() => new DagSpecCache({ ttlMs: 1, maxEntries: 0 })).toThrow(RangeError);
    expect(() => new DagSpecCache({ ttlMs: 1, maxBytes: 0 })).toThrow(RangeError);
  });
});
