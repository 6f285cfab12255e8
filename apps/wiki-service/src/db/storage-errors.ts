import { DaguError } from '@dagu-mcp/contracts';
import { deadlinePassedError } from '@dagu-mcp/bus';

/**
 * Sorts PostgreSQL failures into the error kinds of CONVENTIONS §7. An
 * operational failure — the database unreachable, restarting, out of
 * connections, a deadlock or serialization failure, or a statement cut off
 * by the request deadline (`withTransaction` arms `statement_timeout`) — is
 * `resource_unavailable` (spec 021 "The resource exists but cannot currently
 * be read"; transient, so retryable). Anything else is left alone and
 * reported as `internal_error` by the bus boundary.
 */

/** `query_canceled`: the statement timeout set from the request's deadline fired. */
const QUERY_CANCELED = '57014';
/** SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57P operator intervention (shutdown). */
const UNAVAILABLE_PREFIXES = ['08', '53', '57P'];
/** serialization_failure, deadlock_detected, lock_not_available. */
const UNAVAILABLE_CODES = new Set(['40001', '40P01', '55P03']);
/** Socket errors node reports while PostgreSQL is unreachable. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** pg-pool failures without a code. */
const UNAVAILABLE_MESSAGES = [/timeout exceeded when trying to connect/i, /connection terminated/i, /Connection ended/i];

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** The error of every wiki storage outage. */
export function wikiStoreUnavailable(): DaguError {
  return new DaguError('resource_unavailable', 'The wiki store (PostgreSQL) is currently unavailable.');
}

/**
 * Maps a failure to what the handler rethrows: `DaguError`s unchanged, a
 * deadline cancel as the bus's deadline error, operational failures as
 * {@link wikiStoreUnavailable}, anything else unchanged (a bug).
 */
export function classifyStorageError(error: unknown): unknown {
  if (error instanceof DaguError) return error;
  const code = errorCode(error);
  if (code === QUERY_CANCELED) return deadlinePassedError();
  if (code !== undefined && (UNAVAILABLE_CODES.has(code) || NETWORK_CODES.has(code))) return wikiStoreUnavailable();
  if (code !== undefined && code.length === 5 && UNAVAILABLE_PREFIXES.some((p) => code.startsWith(p))) {
    return wikiStoreUnavailable();
  }
  const message = error instanceof Error ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message)) ? wikiStoreUnavailable() : error;
}

/** Runs one storage operation; its failure is rethrown classified by {@link classifyStorageError}. */
export async function withStorageErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error: unknown) {
    throw classifyStorageError(error);
  }
}
