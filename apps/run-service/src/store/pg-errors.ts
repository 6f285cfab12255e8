import { DaguError } from '@dagu-mcp/contracts';
import { deadlinePassedError } from '@dagu-mcp/bus';

/**
 * Storage failures by the error taxonomy of CONVENTIONS §7: PostgreSQL down,
 * overloaded or a statement cut by the request's deadline is
 * `resource_unavailable` (transient); a unique violation is reported to the
 * caller as the domain conflict it means; anything else stays as it is (the
 * bus boundary turns it into `internal_error`).
 */

const TRANSIENT_CLASSES = ['08', '53', '57P'];
const TRANSIENT_CODES = new Set(['40001', '40P01', '55P03', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const TRANSIENT_MESSAGES = [/timeout exceeded when trying to connect/i, /connection terminated/i, /Connection ended/i];
/** SQLSTATE of `statement_timeout` (armed by `withTransaction` with the request's remaining time). */
const QUERY_CANCELED = '57014';
/** SQLSTATE of a unique violation. */
export const UNIQUE_VIOLATION = '23505';

/** The `code` of a pg or node error, if any. */
export function pgCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** The error to rethrow for a storage failure (see the module comment). */
export function classifyStorageError(error: unknown): unknown {
  if (error instanceof DaguError) return error;
  const code = pgCodeOf(error);
  if (code === QUERY_CANCELED) return deadlinePassedError();
  const transient =
    (code !== undefined && (TRANSIENT_CODES.has(code) || (code.length === 5 && TRANSIENT_CLASSES.some((c) => code.startsWith(c))))) ||
    TRANSIENT_MESSAGES.some((pattern) => pattern.test(error instanceof Error ? error.message : ''));
  return transient ? new DaguError('resource_unavailable', 'The run store (PostgreSQL) is currently unavailable.') : error;
}

/** Runs `operation`, rethrowing its failure classified by {@link classifyStorageError}. */
export async function withStorageErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error: unknown) {
    throw classifyStorageError(error);
  }
}

/** `resource_not_found` for a run. */
export function runNotFound(dagName: string, dagRunId: string): DaguError {
  return new DaguError('resource_not_found', `No run ${dagRunId} of DAG ${dagName} exists.`, { field: 'dagRunId' });
}
