import { randomUUID } from 'node:crypto';
import { DaguError, type BusRequest, type ErrorCode, type Principal } from '@dagu-mcp/contracts';
import { Redis } from 'ioredis';

/** The Redis the integration tier runs against (the stack's, 127.0.0.1:6379 unless REDIS_URL says otherwise). */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether the bus tests' clients and workers use the direct hand-off
 * (src/handoff/): yes unless `BUS_HANDOFF=false`, with which scripts/test.sh
 * runs the bus suite a second time so BullMQ's stock path is proven too.
 * Spread {@link TEST_HANDOFF_OPTION} into `BusClient` and `ServiceWorker` options.
 */
export const TEST_HANDOFF = process.env.BUS_HANDOFF !== 'false';

/** `{ handoff: TEST_HANDOFF }`, for `BusClient` and `ServiceWorker` options. */
export const TEST_HANDOFF_OPTION = { handoff: TEST_HANDOFF } as const;

/** The caller every test request carries. */
export const TEST_PRINCIPAL: Principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' };

/** A key prefix of its own for one test file, so files never see each other's jobs. */
export function randomPrefix(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

/** Deletes every key under `${prefix}:` (the test's queues, jobs, locks). */
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

/** Polls `check` every 25 ms until it returns true; rejects after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The DaguError a promise rejects with, plus how long it took; fails the test when it resolves or throws another type. */
export async function rejectionOf(promise: Promise<unknown>): Promise<{ error: DaguError; elapsedMs: number }> {
  const started = performance.now();
  try {
    await promise;
  } catch (error) {
    if (error instanceof DaguError) return { error, elapsedMs: performance.now() - started };
    throw new Error(`Expected a DaguError, got ${String(error)}`, { cause: error });
  }
  throw new Error('Expected the call to reject, but it resolved.');
}

/** How a promise settled, and when: never rejects, so it can be awaited later without an unhandled rejection. */
export type Settled<T> = { ok: true; value: T; elapsedMs: number } | { ok: false; error: unknown; elapsedMs: number };

/** Observes `promise` from now on; see {@link Settled}. */
export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  const started = performance.now();
  return promise.then(
    (value) => ({ ok: true as const, value, elapsedMs: performance.now() - started }),
    (error: unknown) => ({ ok: false as const, error, elapsedMs: performance.now() - started }),
  );
}

/** Shorthand for the code of a DaguError rejection. */
export async function codeOf(promise: Promise<unknown>): Promise<ErrorCode> {
  return (await rejectionOf(promise)).error.code;
}

/** A valid `echo` bus request from {@link TEST_PRINCIPAL}, due in a minute, answered on `replyTo`. */
export function echoRequest(replyTo: string): BusRequest {
  return {
    op: 'echo',
    payload: { text: 'hi' },
    principal: TEST_PRINCIPAL,
    deadline: Date.now() + 60_000,
    traceContext: {},
    replyTo,
  };
}
