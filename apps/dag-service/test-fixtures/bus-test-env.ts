import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * Redis helpers of the dag-service bus test (CONVENTIONS §10: a queue prefix
 * of its own per test file, cleaned up afterwards).
 */

/** The bus Redis of the integration tier (127.0.0.1:6379) unless REDIS_URL says otherwise. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ key prefix of its own, e.g. `test-dag-service-1a2b3c4d`. */
export function randomBusPrefix(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

/** Deletes every key under `${prefix}:` (queues, jobs, locks of the test). */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error: unknown) {
    return error;
  }
  throw new Error('Expected the call to fail, but it succeeded.');
}
