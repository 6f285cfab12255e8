import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { FailureLimiter, SLOWDOWN_MAX_MS, slowdownMs } from './failure-limiter';

/** The shared failure limit against the real Redis (docs/security.md "Role boundaries", item 5). */
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `fl-test-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test('an address over its failures is blocked on every replica; the memo of a clear address lasts a second', async () => {
  const a = new FailureLimiter({ redis, prefix, perUser: 5, perAddress: 3, windowSeconds: 60 });
  const b = new FailureLimiter({ redis, prefix, perUser: 5, perAddress: 3, windowSeconds: 60 });
  const now = Date.now();
  expect(await b.checkAddress('10.0.0.1', now)).toBeUndefined(); // replica b memoises "clear"
  for (let i = 0; i < 3; i++) await a.recordFailure('10.0.0.1');
  expect(await a.checkAddress('10.0.0.1', now)).toMatchObject({ retryAfterSeconds: expect.any(Number) });
  expect(await b.checkAddress('10.0.0.1', now + 500)).toBeUndefined(); // still within b's memo
  expect(await b.checkAddress('10.0.0.1', now + 1500)).toMatchObject({ retryAfterSeconds: expect.any(Number) });
  expect(await a.checkAddress('10.0.0.2', now)).toBeUndefined(); // other addresses are unaffected
});

test('a username is refused only from the address that failed; elsewhere it is slowed, and a success clears it', async () => {
  const limiter = new FailureLimiter({ redis, prefix: `${prefix}-u`, perUser: 2, perAddress: 100, windowSeconds: 60 });
  for (const address of ['10.0.0.3', '10.0.0.3']) {
    expect(await limiter.reserve(address, 'victim')).toEqual({ delayMs: expect.any(Number) });
    await limiter.settle(address, 'victim', false);
  }
  expect(await limiter.reserve('10.0.0.3', 'victim')).toMatchObject({ retryAfterSeconds: expect.any(Number) });
  expect(await limiter.reserve('10.0.0.5', 'victim')).toEqual({ delayMs: 250 });
  await limiter.settle('10.0.0.5', 'victim', true);
  expect(await limiter.reserve('10.0.0.6', 'victim')).toEqual({ delayMs: 0 });
});

test('reservations are atomic: a parallel burst gets exactly the limit through', async () => {
  const limiter = new FailureLimiter({ redis, prefix: `${prefix}-b`, perUser: 4, perAddress: 100, windowSeconds: 60 });
  const results = await Promise.all(Array.from({ length: 30 }, () => limiter.reserve('10.0.0.7', 'admin')));
  expect(results.filter((r) => 'delayMs' in r)).toHaveLength(4);
  // The 26 refused attempts were refunded: the four failures alone keep the pair at its limit.
  for (let i = 0; i < 4; i++) await limiter.settle('10.0.0.7', 'admin', false);
  expect(await limiter.reserve('10.0.0.7', 'admin')).toMatchObject({ retryAfterSeconds: expect.any(Number) });
  // A correct password resets the pair: the next burst again gets exactly the limit through.
  await limiter.settle('10.0.0.7', 'admin', true);
  const again = await Promise.all(Array.from({ length: 10 }, () => limiter.reserve('10.0.0.7', 'admin')));
  expect(again.filter((r) => 'delayMs' in r)).toHaveLength(4);
});

test('the slowdown doubles past the free failures and is capped', () => {
  expect([0, 1, 2, 3, 4].map((n) => slowdownMs(n, 2))).toEqual([0, 0, 250, 500, 1000]);
  expect(slowdownMs(100, 2)).toBe(SLOWDOWN_MAX_MS);
});
