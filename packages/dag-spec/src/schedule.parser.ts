/**
 * `schedule`: a 5-field cron string or a list of them (dagu-model.md §3–4),
 * each checked with croner. An optional `CRON_TZ=<IANA zone> ` prefix sets
 * the zone, as in Dagu. A map form (`{start, stop, restart}`) accepts `start`
 * only: stop/restart schedules are not supported here.
 */
import { Cron } from 'croner';
import type { ErrorSink } from './error-sink';
import { asList, asMap } from './yaml-values';

/**
 * Returns an error message for a bad expression, or `undefined` when it is a
 * valid 5-field cron (with an optional `CRON_TZ=` prefix).
 */
export function checkCron(expression: string): string | undefined {
  let pattern = expression.trim();
  let timezone: string | undefined;
  const tz = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(pattern);
  if (tz?.[1] !== undefined && tz[2] !== undefined) {
    timezone = tz[1];
    pattern = tz[2].trim();
  }
  if (pattern.split(/\s+/).length !== 5) return 'cron expression must have exactly 5 fields';
  try {
    const job = new Cron(pattern, { paused: true, mode: '5-part', ...(timezone ? { timezone } : {}) });
    job.nextRun();
    job.stop();
    return undefined;
  } catch (error: unknown) {
    return `invalid cron expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Parses `schedule` into the list of expressions; errors use `field 'schedule'`. */
export function parseSchedule(value: unknown, sink: ErrorSink): string[] {
  if (value === null || value === undefined) return [];
  const map = asMap(value);
  let entries: unknown[];
  if (map) {
    for (const key of map.keys()) {
      if (key !== 'start') sink.field(`schedule.${key}`, `${key} schedules are not supported here`);
    }
    entries = asList(map.get('start'));
  } else {
    entries = asList(value);
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      sink.field('schedule', 'cron expression must be a string', entry);
      continue;
    }
    const problem = checkCron(entry);
    if (problem) sink.field('schedule', problem, entry);
    else out.push(entry.trim());
  }
  return out;
}
