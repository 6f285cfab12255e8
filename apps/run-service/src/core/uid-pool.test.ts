import { parseUidRange } from '../config/uid-range';
import { UidPool } from './uid-pool';

describe('UidPool (a uid per run)', () => {
  it('never hands out a uid an active run holds, and refuses when all are held', () => {
    const pool = new UidPool(200, 203);
    const taken = [pool.acquire(), pool.acquire(), pool.acquire(), pool.acquire()];
    expect(new Set(taken).size).toBe(4);
    for (const uid of taken) expect(uid >= 200 && uid <= 203).toBe(true);
    expect(() => pool.acquire()).toThrow(/no free uid in RUN_STEP_UID_RANGE 200-203/);
    pool.release(taken[2]!);
    expect(pool.acquire()).toBe(taken[2]);
  });

  it('goes round the range before a released uid comes back', () => {
    const pool = new UidPool(10, 14);
    const first = pool.acquire();
    pool.release(first);
    const seen = [1, 2, 3, 4].map(() => {
      const uid = pool.acquire();
      pool.release(uid);
      return uid;
    });
    expect(seen).not.toContain(first);
    expect(pool.acquire()).toBe(first);
  });

  it('parses ranges and refuses bad ones', () => {
    expect(parseUidRange('200000-265535')).toEqual({ first: 200000, last: 265535 });
    expect(parseUidRange('999-999')).toEqual({ first: 999, last: 999 });
    expect(() => parseUidRange('0-10')).toThrow(/uid 0/);
    expect(() => parseUidRange('10-5')).toThrow(/below/);
    expect(() => parseUidRange('abc')).toThrow(/first-last/);
    expect(() => new UidPool(0, 3)).toThrow(RangeError);
  });
});
