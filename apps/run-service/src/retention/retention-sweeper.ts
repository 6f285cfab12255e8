import { rm } from 'node:fs/promises';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import { runWorkDir } from '../process/run-environment';
import { deleteExpiredRuns } from '../store/retention.repository';

/**
 * Retention (dagu-model §3 `hist_retention_days`; issue "Retention"): runs
 * that ended more than their DAG's `hist_retention_days` ago (the value of
 * the run's own spec snapshot, else `RUN_HIST_RETENTION_DAYS`, default 30)
 * are deleted with their child runs, attempts, steps, foreach items and every
 * log stream and chunk. Each replica sweeps every `RUN_RETENTION_SWEEP_MS`
 * (and once shortly after start); a sweep deletes in batches of
 * {@link BATCH} root runs, one short transaction each, claiming rows with
 * `FOR UPDATE SKIP LOCKED` — readers are never blocked (PostgreSQL MVCC)
 * and replicas never collide. Active runs (running, queued, waiting) are
 * never deleted. After each batch commits, the per-run working directory
 * (`RUN_WORK_DIR/<dag>/<run id>`, `run-environment.ts`) of every deleted run
 * (root and child runs) is removed; the `<dag>` directory stays (a new run
 * of the DAG may be creating its directory in it). A directory that cannot
 * be removed is logged, never retried.
 */

/** Root runs deleted per transaction. */
export const BATCH = 50;

/** What the sweeper works with. */
export interface RetentionDeps {
  pool: Pool;
  logger: Logger;
  /** `RUN_HIST_RETENTION_DAYS`: days kept when the run's snapshot sets no `hist_retention_days`. */
  defaultDays: number;
  /** `RUN_RETENTION_SWEEP_MS`: sweep period, in ms. */
  sweepMs: number;
  /** `RUN_WORK_DIR`: base of per-run working directories; absent = directories are left alone. */
  workDir?: string;
}

/** Periodic retention sweep of one replica. */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly deps: RetentionDeps) {}

  /** Starts sweeping (first sweep after a few seconds, then every `sweepMs`). */
  start(): void {
    const tick = (): void => {
      this.running ??= this.sweep().finally(() => (this.running = undefined));
    };
    this.first = setTimeout(tick, Math.min(5000, this.deps.sweepMs));
    this.first.unref();
    this.timer = setInterval(tick, this.deps.sweepMs);
    this.timer.unref();
  }

  /** Stops sweeping; waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.first !== undefined) clearTimeout(this.first);
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
  }

  /** One sweep. @returns how many root runs it deleted. Never rejects. */
  async sweep(): Promise<number> {
    let deleted = 0;
    try {
      for (;;) {
        const batch = await deleteExpiredRuns(this.deps.pool, this.deps.defaultDays, BATCH);
        deleted += batch.count;
        await this.removeWorkDirs(batch.runs);
        if (batch.count < BATCH) break;
      }
      if (deleted > 0) this.deps.logger.info({ deleted }, 'retention: old runs deleted');
    } catch (error) {
      this.deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'retention sweep failed');
    }
    return deleted;
  }

  /** Removes the working directories of deleted runs (after their rows are gone). */
  private async removeWorkDirs(runs: ReadonlyArray<{ dag_name: string; dag_run_id: string }>): Promise<void> {
    const base = this.deps.workDir;
    if (base === undefined || runs.length === 0) return;
    for (const run of runs) {
      const dir = runWorkDir(base, run.dag_name, run.dag_run_id);
      await rm(dir, { recursive: true, force: true }).catch((error: unknown) =>
        this.deps.logger.warn(
          { err: error instanceof Error ? error.message : String(error), dir },
          'retention: could not remove a run directory',
        ),
      );
    }
  }
}
