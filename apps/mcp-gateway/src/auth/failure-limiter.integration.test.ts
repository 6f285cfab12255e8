import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { FailureLimiter } from './failure-limiter';

/** The shared failure limit against the real Redis (issue "Brute force"). */
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

test('usernames are limited on their own', async () => {
  const limiter = new FailureLimiter({ redis, prefix: `${prefix}-u`, perUser: 2, perAddress: 100, windowSeconds: 60 });
  await limiter.recordFailure('10.0.0.3', 'victim');
  await limiter.recordFailure('10.0.0.4', 'victim');
  expect(await limiter.check('10.0.0.5', 'victim')).toBeDefined();
  expect(await limiter.check('10.0.0.5', 'someone-else')).toBeUndefined();
  await limiter.recordSuccess('victim');
  expect(await limiter.check('10.0.0.5', 'victim')).toBeUndefined();
});
