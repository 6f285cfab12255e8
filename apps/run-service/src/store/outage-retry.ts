import { isTransientPgFailure, type Logger } from '@dagu-mcp/runtime';

/**
 * Retrying the engine's own writes through a PostgreSQL outage (an outage of a minute costs running runs nothing). The engine's
 * bookkeeping — a run's start reads, its end, step states, log chunks, foreach
 * rows — is not a request with a caller waiting: when PostgreSQL is
 * unavailable (runtime's classifier: connection refused or lost, shutdown,
 * too many connections, deadlock) the write waits and is tried again, with a
 * backoff of 250 ms doubling to 5 s, until it succeeds or `maxMs`
 * (`RUN_DB_OUTAGE_MAX_MS`) passed since the first failure. Any other failure
 * (a bug, a constraint) is thrown at once, as before.
 */

/** First wait after a failed try, in ms. */
const FIRST_BACKOFF_MS = 250;
/** Longest wait between two tries, in ms. */
const MAX_BACKOFF_MS = 5000;

/** Options of {@link retryWhileUnavailable}. */
export interface OutageRetryOptions {
  /** Give up (throw the last failure) once this long passed since the first failure, in ms. */
  readonly maxMs: number;
  readonly logger?: Logger;
  /** What is written, for the log (`run end`, `step states`, …). */
  readonly what: string;
  /** Extra log fields (e.g. `runPk`). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** Wait before try `n + 1` (n ≥ 1 failed tries so far), in ms. */
export function outageBackoffMs(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1));
}

/**
 * Runs `operation`; while it fails because PostgreSQL is unavailable, waits
 * and runs it again (see the module comment). `operation` must be safe to run
 * twice: the engine's writes are (an UPDATE to the latest state, an INSERT …
 * ON CONFLICT DO NOTHING, a status change guarded by the current status).
 *
 * @throws the failure itself when it is not an outage, or the last one after `maxMs`
 */
export async function retryWhileUnavailable<T>(operation: () => Promise<T>, options: OutageRetryOptions): Promise<T> {
  let firstFailure: number | undefined;
  for (let failures = 0; ;) {
    try {
      const result = await operation();
      if (firstFailure !== undefined)
        options.logger?.info(
          { ...options.fields, what: options.what, outageMs: Date.now() - firstFailure, tries: failures + 1 },
          'PostgreSQL write succeeded after an outage',
        );
      return result;
    } catch (error) {
      if (!isTransientPgFailure(error)) throw error;
      firstFailure ??= Date.now();
      failures++;
      if (Date.now() - firstFailure >= options.maxMs) throw error;
      if (failures === 1)
        options.logger?.warn(
          { ...options.fields, what: options.what, err: error instanceof Error ? error.message : String(error) },
          'PostgreSQL unavailable: write will be retried',
        );
      await new Promise((resolve) => setTimeout(resolve, outageBackoffMs(failures)));
    }
  }
}
