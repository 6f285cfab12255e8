import { Redis, type RedisOptions } from 'ioredis';
import { type BusLogger } from './bus-logger';

/**
 * What a connection is for; it decides how commands behave while Redis is down.
 * - `commands`: the gateway's job-adding connection. No offline queue and no
 *   retry of in-flight commands, so a call fails at once instead of waiting.
 * - `subscriber`: the gateway's reply-channel subscription (re-subscribed by
 *   BusClient itself on every `ready`).
 * - `worker`: a BullMQ Worker's connection; BullMQ requires
 *   `maxRetriesPerRequest: null` so its commands wait for the reconnect.
 */
export type ConnectionRole = 'commands' | 'subscriber' | 'worker';

/** First reconnect delay, in ms; it doubles per failed attempt up to the cap. */
const FIRST_RECONNECT_DELAY_MS = 50;

/** Default cap of the reconnect backoff, in ms. */
export const DEFAULT_MAX_RECONNECT_DELAY_MS = 1000;

/**
 * The capped exponential backoff every bus connection reconnects with.
 *
 * @param attempt - 1 for the first reconnect attempt after a loss.
 * @param capMs - the longest delay, in ms (default 1000).
 * @returns the delay in ms before the attempt: 50, 100, 200, … up to `capMs`.
 */
export function reconnectDelayMs(attempt: number, capMs: number = DEFAULT_MAX_RECONNECT_DELAY_MS): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 20);
  return Math.min(FIRST_RECONNECT_DELAY_MS * 2 ** exponent, capMs);
}

function optionsFor(role: ConnectionRole, name: string): RedisOptions {
  const common: RedisOptions = {
    connectionName: name,
    // Never give up: a connection reconnects by itself whenever Redis returns.
    retryStrategy: (attempt: number) => reconnectDelayMs(attempt),
    connectTimeout: 5000,
  };
  switch (role) {
    case 'commands':
      return { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false };
    case 'subscriber':
      return { ...common, autoResubscribe: false, maxRetriesPerRequest: null };
    case 'worker':
      return { ...common, maxRetriesPerRequest: null };
  }
}

/**
 * Opens an ioredis connection for one bus role and logs its losses and
 * recoveries (errors while reconnecting go to `debug`, not to stderr).
 *
 * @param redisUrl - `redis://[user:pass@]host:port[/db]`.
 * @param role - see {@link ConnectionRole}.
 * @param name - the `CLIENT SETNAME` of the connection, for `CLIENT LIST`.
 * @param logger - receives `redis connection lost` / `redis connection ready`.
 */
export function openRedisConnection(redisUrl: string, role: ConnectionRole, name: string, logger: BusLogger): Redis {
  const redis = new Redis(redisUrl, optionsFor(role, name));
  let lost = false;
  redis.on('error', (error: unknown) => {
    logger.debug(
      { connection: name, error: error instanceof Error ? error.message : String(error) },
      'redis connection error',
    );
  });
  redis.on('close', () => {
    if (lost) return;
    lost = true;
    // A close we asked for (quit/disconnect at shutdown) ends the connection in the same tick;
    // only a loss we did not ask for goes on to reconnect, and only that is worth a warning.
    process.nextTick(() => {
      if (redis.status !== 'end') logger.warn({ connection: name }, 'redis connection lost');
    });
  });
  redis.on('ready', () => {
    if (lost) logger.info({ connection: name }, 'redis connection ready');
    lost = false;
  });
  return redis;
}

/**
 * Resolves once `redis` is ready; while Redis is down it keeps waiting (the
 * connection retries by itself).
 *
 * @throws Error when the connection is closed for good (`end`) before it is ready.
 */
export function waitUntilReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onReady = (): void => {
      redis.off('end', onEnd);
      resolve();
    };
    const onEnd = (): void => {
      redis.off('ready', onReady);
      reject(new Error('The Redis connection was closed before it became ready.'));
    };
    redis.once('ready', onReady);
    redis.once('end', onEnd);
  });
}

/**
 * Whether a failed command on a `commands` connection is known never to have
 * run in Redis: ioredis refused to write it (the connection was not
 * writable, and the offline queue is off), or Redis answered it with an
 * error (`ReplyError`: it ran no part of a script that failed before its first
 * write, and a bus insert writes nothing useful before it fails). Any other failure
 * (the connection dropped after the command was written: `MaxRetriesPerRequestError`,
 * a command timeout) leaves its fate open: Redis may have run it and lost only the reply.
 */
export function neverReachedRedis(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // redis-errors' ReplyError (ioredis types it `any`, so it is told by its name).
  if (error.name === 'ReplyError') return true;
  return /^Stream isn't writeable/.test(error.message);
}

/** Closes a connection politely (QUIT), or at once when it is not connected. */
export async function closeRedisConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // fall through to a hard disconnect
    }
  }
  redis.disconnect(false);
}

/**
 * One round trip to Redis on a connection of its own that does not retry:
 * connects, sends `PING` and disconnects (the start-up wait for Redis; docs/decisions.md "A start waits for PostgreSQL and Redis"). Gives up after `timeoutMs` (default 3000).
 *
 * @param redisUrl - `redis://[user:pass@]host:port[/db]`.
 * @throws the connection's failure (`ECONNREFUSED`, a timeout, `NOAUTH`, `LOADING`).
 */
export async function pingRedis(redisUrl: string, timeoutMs = 3000): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: timeoutMs,
  });
  redis.on('error', () => undefined); // the failure is what connect()/ping() reject with
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/** Whether a {@link pingRedis} failure means "not there yet": anything but an authentication refusal. */
export function isRedisStartWait(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return !/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(message);
}
