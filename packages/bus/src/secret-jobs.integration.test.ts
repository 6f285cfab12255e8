import { randomUUID } from 'node:crypto';
import { DaguError, defineOps } from '@dagu-mcp/contracts';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { BusClient } from './bus-client';
import { ServiceWorker } from './service-worker';
import {
  deleteKeysWithPrefix,
  randomPrefix,
  rejectionOf,
  TEST_HANDOFF_OPTION,
  TEST_PRINCIPAL,
  TEST_REDIS_URL,
  waitFor,
} from '../test-fixtures/bus-test-env';

/**
 * Ops whose payload `carriesSecret` (the workbook password, docs/decisions.md
 * "Workbook reads") leave no job in Redis once the call is over: not when the
 * handler succeeds, not when it fails (BullMQ keeps failed jobs with their
 * data), not when no replica took the job before the caller's deadline. The
 * same failure without `carriesSecret` keeps its job: the control that shows
 * the scan would see the secret.
 */
const Secret = z.object({ secret: z.string().min(1), fail: z.boolean() });
const secretOps = defineOps({
  secretRead: { request: Secret, reply: z.object({ ok: z.literal(true) }), mutation: false, carriesSecret: true },
  plainRead: { request: Secret, reply: z.object({ ok: z.literal(true) }), mutation: false },
});
const handle = async (p: z.infer<typeof Secret>): Promise<{ ok: true }> => {
  if (p.fail) throw new DaguError('resource_unavailable', 'the file is held by another program');
  return { ok: true };
};

const prefix = randomPrefix('secret');
const worker = new ServiceWorker({
  service: 'run',
  catalog: secretOps,
  handlers: { secretRead: handle, plainRead: handle },
  redisUrl: TEST_REDIS_URL,
  prefix,
  ...TEST_HANDOFF_OPTION,
});
const client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, ...TEST_HANDOFF_OPTION });
const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
const options = { principal: TEST_PRINCIPAL };

beforeAll(async () => {
  await Promise.all([worker.start(), client.start()]);
});

afterAll(async () => {
  await client.close();
  await worker.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  redis.disconnect();
});

/** Whether any key under the test prefix holds `secret` in its name or value (hashes, lists, sets, zsets, streams). */
async function redisHolds(secret: string): Promise<boolean> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'hash'
          ? await redis.hgetall(key)
          : type === 'list'
            ? await redis.lrange(key, 0, -1)
            : type === 'set'
              ? await redis.smembers(key)
              : type === 'zset'
                ? await redis.zrange(key, 0, -1)
                : type === 'stream'
                  ? await redis.xrange(key, '-', '+')
                  : type === 'string'
                    ? await redis.get(key)
                    : '';
      if (`${key} ${JSON.stringify(value)}`.includes(secret)) return true;
    }
  } while (cursor !== '0');
  return false;
}

describe('jobs that carry a secret leave nothing in Redis', () => {
  it('after a success and after a failure', async () => {
    const secret = `pw-${randomUUID()}`;
    await expect(client.call('run', secretOps, 'secretRead', { secret, fail: false }, options)).resolves.toEqual({
      ok: true,
    });
    const { error } = await rejectionOf(client.call('run', secretOps, 'secretRead', { secret, fail: true }, options));
    expect(error.code).toBe('resource_unavailable');
    // The worker fails the job right after it publishes the reply.
    await new Promise((r) => setTimeout(r, 200));
    expect(await redisHolds(secret)).toBe(false);
  });

  it('control: the same failure without carriesSecret keeps the failed job, secret included', async () => {
    const secret = `pw-${randomUUID()}`;
    await rejectionOf(client.call('run', secretOps, 'plainRead', { secret, fail: true }, options));
    await waitFor(() => redisHolds(secret), 2000, 'the failed job to be kept');
  });

  it('a job no replica took before the deadline is removed by the caller', async () => {
    const secret = `pw-${randomUUID()}`;
    // No worker serves the wiki queue here: the job waits until the caller gives up.
    const { error } = await rejectionOf(
      client.call('wiki', secretOps, 'secretRead', { secret, fail: false }, { ...options, timeoutMs: 300 }),
    );
    expect(error.code).toBe('resource_unavailable');
    await waitFor(async () => !(await redisHolds(secret)), 2000, 'the untaken job to be removed');
    const control = `pw-${randomUUID()}`;
    await rejectionOf(
      client.call('wiki', secretOps, 'plainRead', { secret: control, fail: false }, { ...options, timeoutMs: 300 }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await redisHolds(control)).toBe(true);
  });
});
