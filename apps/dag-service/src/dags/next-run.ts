import { Cron } from 'croner';

/**
 * Next scheduled start of a DAG (021 DAG collection `sort=nextRun`, the
 * `nextRun` field of `dag.list` / `dag.get`).
 *
 * Decision: computed at read time, never stored. A stored value goes stale
 * the minute it passes, so a `sort=nextRun` page would need a writer to keep
 * it fresh; computing costs one croner evaluation per distinct expression,
 * and this calculator caches the answer per expression until that instant
 * passes (for every `now` in `[computedAt, next)` the next run after `now` is
 * `next`), so a list of 10,000 DAGs sharing a few hundred expressions costs a
 * few hundred evaluations, then none until a run time passes.
 *
 * Expressions are 5-field cron (dagu-model §3) with an optional
 * `CRON_TZ=<IANA zone> ` (or `TZ=`) prefix, as `@dagu-mcp/dag-spec` accepts
 * them; without a prefix they are read in the process's local time zone, as
 * Dagu reads them in its server's zone. Day-of-month and day-of-week combine
 * with OR, as in classic cron.
 */

interface CacheEntry {
  /** `undefined` when the expression no longer parses (stored under older rules): no next run. */
  readonly cron: Cron | undefined;
  computedAt: number;
  next: Date | undefined;
}

/** Splits an optional `CRON_TZ=<zone>` / `TZ=<zone>` prefix off a cron expression. */
export function splitTimezone(expression: string): { pattern: string; timezone: string | undefined } {
  const trimmed = expression.trim();
  const match = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(trimmed);
  if (match?.[1] !== undefined && match[2] !== undefined) return { pattern: match[2].trim(), timezone: match[1] };
  return { pattern: trimmed, timezone: undefined };
}

function compile(expression: string): Cron | undefined {
  const { pattern, timezone } = splitTimezone(expression);
  try {
    // No callback and paused: croner arms no timer, the object only evaluates.
    return new Cron(pattern, { paused: true, mode: '5-part', ...(timezone !== undefined ? { timezone } : {}) });
  } catch {
    return undefined;
  }
}

/** Computes and caches next run times. One instance per service process. */
export class NextRunCalculator {
  private readonly cache = new Map<string, CacheEntry>();

  /**
   * @param maxEntries - distinct expressions kept before the cache is
   *   emptied and refilled on demand; default 10,000.
   */
  constructor(private readonly maxEntries = 10_000) {}

  /**
   * The earliest next start among `schedule`'s expressions, strictly after
   * `now` (whole minutes, as cron fires).
   *
   * @param schedule - cron expressions of one DAG; an expression that does not
   *   parse is ignored.
   * @param now - the reference instant; default the current time.
   * @returns `undefined` for an empty schedule or when no expression fires again.
   */
  nextRunOf(schedule: readonly string[], now: Date = new Date()): Date | undefined {
    let earliest: Date | undefined;
    for (const expression of schedule) {
      const next = this.nextOfExpression(expression, now);
      if (next !== undefined && (earliest === undefined || next.getTime() < earliest.getTime())) earliest = next;
    }
    return earliest;
  }

  private nextOfExpression(expression: string, now: Date): Date | undefined {
    const at = now.getTime();
    let entry = this.cache.get(expression);
    if (entry === undefined) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      entry = { cron: compile(expression), computedAt: Number.NaN, next: undefined };
      this.cache.set(expression, entry);
    }
    if (entry.cron === undefined) return undefined;
    const fresh = entry.next !== undefined && entry.computedAt <= at && at < entry.next.getTime();
    if (!fresh) {
      entry.next = entry.cron.nextRun(now) ?? undefined;
      entry.computedAt = at;
    }
    return entry.next;
  }
}
