import { Cron } from 'croner';
import { formatIdTime } from '../core/run-id';

/**
 * Cron arithmetic of the scheduler (dagu-model §3 `schedule`: 5-field cron,
 * a string or a list). An expression may start with `CRON_TZ=<zone> ` (or
 * `TZ=<zone> `); without it, it is read in the configured zone
 * (`RUN_SCHEDULE_TZ`, default UTC). Day-of-month and day-of-week combine
 * with OR, as in classic cron (croner `legacyMode`).
 */

/** A compiled schedule: its expressions, unparsable ones dropped. */
export interface CompiledSchedule {
  readonly expressions: readonly string[];
  readonly crons: readonly Cron[];
}

/** Splits an optional `CRON_TZ=<zone>` / `TZ=<zone>` prefix off an expression. */
export function splitTimezone(expression: string): { pattern: string; timezone: string | undefined } {
  const trimmed = expression.trim();
  const match = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(trimmed);
  if (match?.[1] !== undefined && match[2] !== undefined) return { pattern: match[2].trim(), timezone: match[1] };
  return { pattern: trimmed, timezone: undefined };
}

/** Compiles `expressions` (a DAG's `schedule`) in `defaultZone`; an invalid expression is left out. */
export function compileSchedule(expressions: readonly string[], defaultZone: string): CompiledSchedule {
  const crons: Cron[] = [];
  for (const expression of expressions) {
    const { pattern, timezone } = splitTimezone(expression);
    try {
      // No callback and paused: croner arms no timer; the object only evaluates.
      crons.push(
        new Cron(pattern, { paused: true, mode: '5-part', legacyMode: true, timezone: timezone ?? defaultZone }),
      );
    } catch {
      // Stored under older rules or a bad zone: never fires.
    }
  }
  return { expressions, crons };
}

/**
 * The fire times of `schedule` in `(fromMs, toMs]`, ascending, without
 * duplicates (two expressions naming the same minute fire once), at most
 * `max` (the latest ones).
 */
export function ticksBetween(schedule: CompiledSchedule, fromMs: number, toMs: number, max = 5): Date[] {
  const times = new Set<number>();
  for (const cron of schedule.crons) {
    let next = cron.nextRun(new Date(fromMs));
    while (next !== null && next.getTime() <= toMs) {
      times.add(next.getTime());
      next = cron.nextRun(next);
    }
  }
  return [...times]
    .sort((a, b) => a - b)
    .slice(-max)
    .map((ms) => new Date(ms));
}

/**
 * The first fire time of `schedule` after `afterMs` (ms since the epoch), or
 * `Infinity` when it never fires again (or has no valid expression). The
 * scheduler keeps it per DAG so a check only evaluates the DAGs that are due.
 */
export function nextTickAfter(schedule: CompiledSchedule, afterMs: number): number {
  let next = Number.POSITIVE_INFINITY;
  const after = new Date(afterMs);
  for (const cron of schedule.crons) next = Math.min(next, cron.nextRun(after)?.getTime() ?? Number.POSITIVE_INFINITY);
  return next;
}

/** Whether `tick` is a fire time of `schedule` (a run is only started for a tick its current schedule still has). */
export function isTick(schedule: CompiledSchedule, tick: Date): boolean {
  return ticksBetween(schedule, tick.getTime() - 1, tick.getTime()).length > 0;
}

/**
 * The run id of the scheduled run of a tick: `<tick time>-scheduled`
 * (`20261129T134800000Z-scheduled`), the same on every replica, so the
 * unique `(dag_name, dag_run_id)` of `runs` lets exactly one replica start
 * it. Sorts by time with generated ids.
 */
export function scheduledRunId(tick: Date): string {
  return `${formatIdTime(tick)}-scheduled`;
}
