import { DaguError } from '@dagu-mcp/contracts';
import { isPgOutage } from '@dagu-mcp/runtime';

/**
 * Failures that mean "a dependency is down", not "a bug" (dagu-model §10): during a Redis or PostgreSQL outage every request gets
 * `resource_unavailable` with `details.dependency`, never `internal_error`,
 * -32603 or HTTP 500. The gateway's own Redis connections (sessions, events,
 * hub) throw ioredis errors, its own pool throws pg errors; both reach the
 * boundaries (request runner, MCP and REST error handlers) unclassified, and
 * are classified here, once.
 */

/** The dependency a request could not reach. */
export type Dependency = 'redis' | 'postgresql';

/** Seconds a REST client is told to wait (`Retry-After`) after `resource_unavailable`: a restart's usual length. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * ioredis failures while Redis is unreachable: the per-request retry limit
 * (`MaxRetriesPerRequestError`), a closed connection, a refused write with the
 * offline queue off, and a reconnect in progress.
 */
const REDIS_MESSAGES = [
  /max retries per request/i,
  /^Connection is closed\.?$/,
  /Stream isn't writeable/i,
  /enableOfflineQueue/i,
  /Command timed out/i,
];

/** Which dependency's outage `error` is, or `undefined` when it is something else (a bug, bad input). */
export function outageOf(error: unknown): Dependency | undefined {
  if (error instanceof DaguError) return undefined;
  if (error instanceof Error) {
    if (error.name === 'MaxRetriesPerRequestError') return 'redis';
    if (REDIS_MESSAGES.some((pattern) => pattern.test(error.message))) return 'redis';
  }
  return isPgOutage(error) ? 'postgresql' : undefined;
}

/**
 * `resource_unavailable` with `details.dependency` for an outage of `dependency`
 * (the caller adds `details.requestId` at its boundary).
 */
export function outageError(dependency: Dependency): DaguError {
  const name = dependency === 'redis' ? 'Redis' : 'PostgreSQL';
  return new DaguError('resource_unavailable', `${name} is unavailable; try again shortly.`, {
    details: { dependency },
  });
}

/** `error` as its outage error when it is one ({@link outageOf}), else `undefined`. */
export function outageErrorOf(error: unknown): DaguError | undefined {
  const dependency = outageOf(error);
  return dependency === undefined ? undefined : outageError(dependency);
}
