import type { Logger } from '../logging/logger';
import { isPgOutage } from '../postgres/pg-errors';

/** First delay between two attempts, ms; it doubles per failed attempt up to {@link MAX_DELAY_MS}. */
const FIRST_DELAY_MS = 250;
/** Longest delay between two attempts, ms. */
const MAX_DELAY_MS = 5000;

/** What {@link waitForDependency} needs. */
export interface DependencyWaitOptions<T> {
  /** The dependency's name in the log line and the error: `PostgreSQL`, `Redis`. */
  readonly dependency: string;
  /** Where it is looked for, as `host:port` (never a URL with its password); see {@link endpointOf}. */
  readonly target: string;
  /** One try: connects (and, for PostgreSQL, migrates); resolves with its result. */
  readonly attempt: () => Promise<T>;
  /** True when a failure means "not there yet" (retried); any other failure is thrown at once. */
  readonly isUnavailable: (error: unknown) => boolean;
  /** How long to keep trying, ms (`DEPENDENCY_WAIT_MS`); `0`: one attempt only. */
  readonly waitMs: number;
  readonly logger: Logger;
  /** Test hook: the delay before attempt `n + 1`, ms; default 250 ms doubling up to 5 s. */
  readonly delayMs?: (failedAttempts: number) => number;
}

/**
 * Runs `attempt` until it succeeds, retrying failures that `isUnavailable`
 * calls "not there yet" (ECONNREFUSED, "the database system is starting up", a
 * connect timeout) with exponential backoff — 250 ms, 500 ms, … capped at 5 s —
 * for at most `waitMs` (docs/decisions.md "A start waits for PostgreSQL and Redis": no process exits because PostgreSQL or
 * Redis came up a few seconds after it). The first such failure logs one line,
 * `waiting for <dependency>` with the target, the reason and the bound; a later
 * success logs `<dependency> answered` with the time waited. The caller keeps
 * its readiness false meanwhile.
 *
 * @returns what the successful attempt resolved with
 * @throws the last failure, its message prefixed with "<dependency> at <target> did
 *   not answer within <n> s: ", once `waitMs` has passed; any failure `isUnavailable`
 *   rejects (a wrong password, a failed migration), at once and unchanged
 */
export async function waitForDependency<T>(options: DependencyWaitOptions<T>): Promise<T> {
  const { dependency, target, logger } = options;
  const started = Date.now();
  const delayOf = options.delayMs ?? ((n: number) => Math.min(FIRST_DELAY_MS * 2 ** Math.min(n - 1, 20), MAX_DELAY_MS));
  for (let failed = 0; ;) {
    try {
      const result = await options.attempt();
      if (failed > 0) logger.info({ dependency, target, waitedMs: Date.now() - started }, `${dependency} answered`);
      return result;
    } catch (error) {
      if (!options.isUnavailable(error)) throw error;
      failed += 1;
      const elapsed = Date.now() - started;
      const reason = reasonOf(error);
      if (elapsed >= options.waitMs) {
        const seconds = options.waitMs / 1000;
        throw new Error(
          `${dependency} at ${target} did not answer within ${seconds} s (DEPENDENCY_WAIT_MS): ${reason}`,
          {
            cause: error,
          },
        );
      }
      if (failed === 1)
        logger.info(
          { dependency, target, reason, waitMs: options.waitMs },
          `waiting for ${dependency} at ${target} (${reason}); retrying with backoff for up to ${options.waitMs / 1000} s`,
        );
      await new Promise((resolve) => setTimeout(resolve, Math.min(delayOf(failed), options.waitMs - elapsed)));
    }
  }
}

/** `code: message` of a failure (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432`), or its message. */
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reasonOf(error.errors[0]);
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  return code !== undefined && message !== '' && !message.includes(code)
    ? `${code}: ${message}`
    : message || (code ?? 'unknown');
}

/**
 * `host:port` of a `postgres://` or `redis://` URL, for log lines and errors
 * (the user name and password are left out).
 *
 * @param url a URL; one that does not parse is returned as `(unparsable URL)`
 * @param defaultPort the scheme's port when the URL has none (5432, 6379)
 */
export function endpointOf(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || defaultPort}`;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * Whether a PostgreSQL failure at start means "not there yet": an outage
 * ({@link isPgOutage}: a socket failure, SQLSTATE classes 08 and 57P — 57P03
 * "the database system is starting up" — and pg-pool's connect timeout). A
 * failure with another SQLSTATE (a wrong password, a failed migration) is not.
 */
export function isPgStartWait(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some((e) => isPgStartWait(e));
  return isPgOutage(error);
}
