import { DaguError } from '@dagu-mcp/contracts';

/**
 * PostgreSQL failures sorted by the error taxonomy of CONTRIBUTING §6–§7: the
 * one copy of "what is retried, what is a conflict" for every service that
 * owns a schema (dag-service, wiki-service, run-service, the gateway's users
 * and audit).
 *
 * | kind          | what                                                         | reported as |
 * |---------------|--------------------------------------------------------------|-------------|
 * | `deadline`    | SQLSTATE 57014 `query_canceled`: the `statement_timeout` that `withTransaction` arms with the request's remaining time fired | the caller's deadline error (the bus's `deadlinePassedError`, `resource_unavailable`) |
 * | `unavailable` | SQLSTATE classes 08 (connection), 53 (insufficient resources), 57P (shutdown); 40001 serialization failure, 40P01 deadlock, 55P03 lock not available; node socket codes; pg-pool's code-less connect timeout, "connection terminated / ended" and "not queryable" (a query on a client whose connection failed) | `resource_unavailable` "The <store> (PostgreSQL) is currently unavailable." — transient, so the bus may retry it (spec 021/022 "cannot currently be read or written") |
 * | `conflict`    | SQLSTATE 23505 `unique_violation`                            | left to the caller, who knows which domain conflict it means (a DAG-run id used, a username taken); uncaught it is a bug → `internal_error` |
 * | `other`       | anything else (syntax errors, constraint bugs, programming errors) | unchanged; the bus boundary reports it as `internal_error` |
 *
 * A `DaguError` is never reclassified: it already says what it is.
 *
 * Unified from three service copies and the gateway's user repository:
 * - EHOSTUNREACH was transient in dag- and wiki-service but not in
 *   run-service: it is transient here (a host without a route is the same
 *   outage as a refused connection).
 * - The unavailable message named each store ("DAG store", "wiki store",
 *   "run store"): kept, as the `store` option of {@link createStorageErrors}.
 * - run-service exported `pgCodeOf` and `UNIQUE_VIOLATION`; the gateway had
 *   its own `isUniqueViolation` with an unchecked cast: both are
 *   {@link pgErrorCode} and {@link isUniqueViolation} here.
 * - The deadline error came from `@dagu-mcp/bus` in each copy; runtime does
 *   not depend on the bus, so it is the `deadlineError` option (as
 *   `withTransaction` takes `onLate`).
 * Everything else (classes, codes, messages) was identical and is kept.
 */

/** SQLSTATE `unique_violation`: a row with this key exists (the caller maps it to its conflict). */
export const PG_UNIQUE_VIOLATION = '23505';
/** SQLSTATE `query_canceled`: here, `statement_timeout` armed from the request deadline. */
export const PG_QUERY_CANCELED = '57014';

/** SQLSTATE classes meaning "the database cannot serve this right now": connection exception, insufficient resources, operator intervention (shutdown). */
const UNAVAILABLE_CLASSES = ['08', '53', '57P'] as const;
/** serialization_failure, deadlock_detected, lock_not_available: the same statement may succeed when run again. */
const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set(['40001', '40P01', '55P03']);
/** Socket failures node reports while PostgreSQL is unreachable. */
const UNAVAILABLE_NODE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
/** pg / pg-pool failures that carry no code, recognized by their message. */
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /Connection ended/i,
  // A query on a client whose connection already failed (a transaction's next statement after a fast shutdown).
  /Client has encountered a connection error and is not queryable/i,
];

/** What a PostgreSQL failure means to its caller (see the module comment). */
export type PgFailureKind = 'deadline' | 'unavailable' | 'conflict' | 'other';

/** The string `code` of a pg or node error (a SQLSTATE or `ECONNREFUSED`-like), if any. */
export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** Sorts a thrown value into a {@link PgFailureKind}; a `DaguError` is always `other`. */
export function classifyPgFailure(error: unknown): PgFailureKind {
  if (error instanceof DaguError) return 'other';
  const code = pgErrorCode(error);
  if (code === PG_QUERY_CANCELED) return 'deadline';
  if (code === PG_UNIQUE_VIOLATION) return 'conflict';
  if (code !== undefined) {
    if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NODE_CODES.has(code)) return 'unavailable';
    if (code.length === 5 && UNAVAILABLE_CLASSES.some((prefix) => code.startsWith(prefix))) return 'unavailable';
  }
  const message = error instanceof Error ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message)) ? 'unavailable' : 'other';
}

/** True for PostgreSQL's `unique_violation` (23505): the caller turns it into its domain `conflict`. */
export function isUniqueViolation(error: unknown): boolean {
  return classifyPgFailure(error) === 'conflict';
}

/**
 * True when PostgreSQL itself is out of reach or shutting down (a socket
 * failure, SQLSTATE classes 08, 53 and 57P, pg-pool's connect timeout and
 * "connection terminated"): an outage, reported with `details.dependency:
 * "postgresql"` (dagu-model §10). Lock and serialization failures are
 * transient but no outage.
 */
export function isPgOutage(error: unknown): boolean {
  if (classifyPgFailure(error) !== 'unavailable') return false;
  const code = pgErrorCode(error);
  return code === undefined || !UNAVAILABLE_SQLSTATES.has(code);
}

/**
 * Whether a failed COMMIT (or a statement that commits on its own) may have
 * committed all the same: the connection was lost after the statement was
 * sent and before PostgreSQL answered it (no SQLSTATE: a reset, a broken
 * pipe, "Connection terminated"). A SQLSTATE answer (a shutdown's 57P01 too)
 * means it did not commit; a client that refused to send ("not queryable")
 * sent nothing.
 */
export function mayHaveCommitted(error: unknown): boolean {
  if (classifyPgFailure(error) !== 'unavailable') return false;
  const code = pgErrorCode(error);
  if (code !== undefined && !['ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)) return false;
  const message = error instanceof Error ? error.message : '';
  return !/not queryable/i.test(message);
}

/**
 * `resource_unavailable` with `details.outcome: "unknown"` and `dependency:
 * "postgresql"` (dagu-model §10): PostgreSQL went away while a change was being
 * committed ({@link mayHaveCommitted}); the gateway resolves it from the
 * mutation record once it can.
 */
export function commitOutcomeUnknownError(): DaguError {
  return new DaguError(
    'resource_unavailable',
    'PostgreSQL went away while the change was being committed; whether it took effect is unknown.',
    { details: { dependency: 'postgresql', outcome: 'unknown' } },
  );
}

/** True when the failure is transient (`unavailable`): running the same work again may succeed. */
export function isTransientPgFailure(error: unknown): boolean {
  return classifyPgFailure(error) === 'unavailable';
}

/** Options of {@link createStorageErrors}. */
export interface StorageErrorsOptions {
  /** The store named in the unavailable message, e.g. `DAG store` → "The DAG store (PostgreSQL) is currently unavailable." */
  readonly store: string;
  /** The error of a statement cut by the request deadline; services pass the bus's `deadlinePassedError`. */
  readonly deadlineError: () => Error;
}

/** One store's failure mapping (see {@link createStorageErrors}). */
export interface StorageErrors {
  /**
   * `resource_unavailable`: the store's outage error; with `details.dependency:
   * "postgresql"` (dagu-model §10) when `cause` is an outage ({@link isPgOutage}).
   */
  unavailableError: (cause?: unknown) => DaguError;
  /**
   * The value to rethrow for `error`: `deadlineError()` for `deadline`,
   * {@link StorageErrors.unavailableError} for `unavailable`, else `error`
   * itself (a `DaguError`, a unique violation the caller did not catch, a bug).
   */
  classify: (error: unknown) => unknown;
  /** Runs one storage operation and rethrows its failure through {@link StorageErrors.classify}. */
  run: <T>(operation: () => Promise<T>) => Promise<T>;
}

/**
 * The failure mapping of one service's store, e.g.
 * `createStorageErrors({ store: 'DAG store', deadlineError: deadlinePassedError })`.
 */
export function createStorageErrors(options: StorageErrorsOptions): StorageErrors {
  const unavailableError = (cause?: unknown): DaguError =>
    new DaguError('resource_unavailable', `The ${options.store} (PostgreSQL) is currently unavailable.`, {
      ...(cause === undefined || isPgOutage(cause) ? { details: { dependency: 'postgresql' } } : {}),
    });
  const classify = (error: unknown): unknown => {
    switch (classifyPgFailure(error)) {
      case 'deadline':
        return options.deadlineError();
      case 'unavailable':
        return unavailableError(error);
      default:
        return error;
    }
  };
  return {
    unavailableError,
    classify,
    async run<T>(operation: () => Promise<T>): Promise<T> {
      try {
        return await operation();
      } catch (error: unknown) {
        throw classify(error);
      }
    },
  };
}
