import { DaguError } from '@dagu-mcp/contracts';
import { deadlinePassedError } from '@dagu-mcp/bus';

/**
 * Classifies PostgreSQL and pool failures by the error taxonomy of
 * CONVENTIONS §7: an operational failure (PostgreSQL down or overloaded, a
 * statement cut by the request's deadline) becomes `resource_unavailable`
 * (transient: the bus may retry it, spec 022 "cannot currently be read or
 * written"); anything else stays what it is, so the bus boundary reports it
 * as `internal_error`.
 */

/** SQLSTATE classes and codes that mean "the database cannot serve this right now". */
const TRANSIENT_SQLSTATE_CLASSES = ['08', '53', '57P'] as const;
const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
]);
/** `statement_timeout` fired: `withTransaction` arms it with the request's remaining time. */
const QUERY_CANCELED = '57014';
/** Socket-level failures reported by node (`err.code`). */
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
/** pg / pg-pool failures that carry no code, recognized by their message. */
const TRANSIENT_MESSAGES = [/timeout exceeded when trying to connect/i, /connection terminated/i, /Connection ended/i];

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** The message every storage outage is reported with. */
export function storageUnavailableError(): DaguError {
  return new DaguError('resource_unavailable', 'The DAG store (PostgreSQL) is currently unavailable.');
}

/**
 * Maps a thrown value to the error the handler should rethrow.
 *
 * @returns the same value for a `DaguError` or an unrecognized failure;
 *   `resource_unavailable` (the bus's deadline error) for SQLSTATE 57014;
 *   `resource_unavailable` (storage unavailable) for connection, resource,
 *   shutdown, serialization, deadlock and lock-timeout failures.
 */
export function classifyStorageError(error: unknown): unknown {
  if (error instanceof DaguError) return error;
  const code = codeOf(error);
  if (code === QUERY_CANCELED) return deadlinePassedError();
  if (code !== undefined) {
    if (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_NODE_CODES.has(code)) return storageUnavailableError();
    if (code.length === 5 && TRANSIENT_SQLSTATE_CLASSES.some((prefix) => code.startsWith(prefix))) {
      return storageUnavailableError();
    }
  }
  const message = error instanceof Error ? error.message : '';
  if (TRANSIENT_MESSAGES.some((pattern) => pattern.test(message))) return storageUnavailableError();
  return error;
}

/**
 * Runs one storage operation and rethrows its failure classified by
 * {@link classifyStorageError}.
 */
export async function withStorageErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error: unknown) {
    throw classifyStorageError(error);
  }
}
