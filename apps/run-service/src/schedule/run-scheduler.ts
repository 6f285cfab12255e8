import type { Logger } from '@dagu-mcp/runtime';
import { compileSchedule, nextTickAfter, ticksBetween, type CompiledSchedule } from './cron-ticks';

/**
 * The cron scheduler of one run-service replica (dagu-model §3 `schedule`).
 * No extra component: every replica runs one, and each tick starts one run
 * over all replicas because the fire function is idempotent per (DAG, tick)
 * (scheduled-start.ts: a run id derived from the tick).
 *
 * - It learns the schedules from dag-service (`dag.schedules`) every
 *   `refreshMs`; the fire function re-reads the DAG right before it starts a
 *   run, so an update, deletion or suspension counts up to that moment.
 * - Every `checkMs` it fires the ticks in `(last check, now]`. The first
 *   window starts when the scheduler starts: ticks missed while no replica
 *   ran are skipped (not caught up), as Dagu's scheduler does. A window is
 *   capped at the latest 5 ticks per DAG (a stalled process does not flood).
 *   Each DAG's next fire time is kept, so a check only evaluates the cron
 *   expressions of the DAGs that are due: with thousands of scheduled DAGs an
 *   idle check is a scan of numbers, not thousands of cron evaluations.
 * - The clock is injectable (`now`) and `check()` is public for tests.
 */

/** One DAG's schedule as `dag.schedules` lists it. */
export interface ScheduleEntry {
  readonly name: string;
  readonly schedule: readonly string[];
  readonly suspended: boolean;
  readonly version: number;
}

/** What the scheduler is built from. */
export interface RunSchedulerOptions {
  /** Every DAG that has a schedule (dag-service `dag.schedules`). */
  readonly list: () => Promise<readonly ScheduleEntry[]>;
  /** Starts the run of `name` for `tick`; idempotent over replicas. */
  readonly fire: (name: string, tick: Date) => Promise<void>;
  /** Zone of expressions without `CRON_TZ=` (`RUN_SCHEDULE_TZ`). */
  readonly timezone: string;
  readonly checkMs: number;
  readonly refreshMs: number;
  readonly logger: Logger;
  /** Clock, ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

interface Known {
  readonly version: number;
  readonly suspended: boolean;
  readonly compiled: CompiledSchedule;
  /** The next fire time after the last check, ms since the epoch (`Infinity`: never). */
  due: number;
}

/** See the module comment. */
export class RunScheduler {
  private readonly known = new Map<string, Known>();
  private readonly now: () => number;
  private lastCheck = 0;
  private lastRefresh = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: RunSchedulerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Starts the window now and checks every `checkMs`. */
  start(): void {
    this.lastCheck = this.now();
    this.timer = setInterval(() => void this.check(), this.options.checkMs);
    this.timer.unref();
  }

  /** Stops checking; resolves when the check in flight is done. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One check: refresh the schedules when due, then fire the ticks since the last check. Overlapping calls share one. */
  check(): Promise<void> {
    this.running ??= this.checkOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async checkOnce(): Promise<void> {
    if (this.now() - this.lastRefresh >= this.options.refreshMs) await this.refresh();
    const from = this.lastCheck;
    const to = this.now();
    if (to <= from) return;
    this.lastCheck = to;
    const fires: Promise<void>[] = [];
    for (const [name, entry] of this.known) {
      if (entry.suspended || entry.due > to) continue;
      for (const tick of ticksBetween(entry.compiled, from, to)) fires.push(this.fireOne(name, tick));
      entry.due = nextTickAfter(entry.compiled, to);
    }
    await Promise.all(fires);
  }

  private async fireOne(name: string, tick: Date): Promise<void> {
    try {
      await this.options.fire(name, tick);
    } catch (error) {
      this.options.logger.warn(
        { dag: name, tick: tick.toISOString(), err: error instanceof Error ? error.message : String(error) },
        'scheduled run not started',
      );
    }
  }

  private async refresh(): Promise<void> {
    try {
      const entries = await this.options.list();
      const seen = new Set<string>();
      for (const entry of entries) {
        seen.add(entry.name);
        const old = this.known.get(entry.name);
        if (old !== undefined && old.version === entry.version && old.suspended === entry.suspended) continue;
        const compiled = compileSchedule(entry.schedule, this.options.timezone);
        this.known.set(entry.name, {
          version: entry.version,
          suspended: entry.suspended,
          compiled,
          due: nextTickAfter(compiled, this.lastCheck),
        });
      }
      for (const name of [...this.known.keys()]) if (!seen.has(name)) this.known.delete(name);
      this.lastRefresh = this.now();
    } catch (error) {
      // dag-service unreachable: keep the schedules known so far (each fire re-checks the DAG anyway).
      this.options.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'schedule refresh failed',
      );
    }
  }
}
