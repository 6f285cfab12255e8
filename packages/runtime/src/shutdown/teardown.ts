/** One step of a teardown: a name for the log and error, and the close to attempt. */
export type TeardownStep = readonly [name: string, close: () => unknown];

/** A teardown step that failed: which step, and its error as `cause`. */
export class TeardownError extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
    /** How many steps failed in all (this is the first). */
    readonly failures: number,
  ) {
    super(`teardown step ${step} failed${failures > 1 ? ` (and ${failures - 1} more)` : ''}`, { cause });
    this.name = 'TeardownError';
  }
}

/**
 * Runs every step of a teardown in order, each awaited, going on past a failure so that every
 * resource gets its close attempt (a pool still ends when the bus failed to close); the first
 * failure is reported at the end (CONTRIBUTING §13, graceful shutdown).
 *
 * @param onFailure - told of each failure as it happens (e.g. a log line); default none
 * @throws TeardownError naming the first step that failed (its error as `cause`) once all ran
 */
export async function runTeardown(
  steps: readonly TeardownStep[],
  onFailure?: (step: string, err: unknown) => void,
): Promise<void> {
  let first: { step: string; err: unknown } | undefined;
  let failures = 0;
  for (const [step, close] of steps) {
    try {
      await close();
    } catch (err) {
      failures += 1;
      first ??= { step, err };
      onFailure?.(step, err);
    }
  }
  if (first !== undefined) throw new TeardownError(first.step, first.err, failures);
}
