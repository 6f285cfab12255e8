import { RunStatus } from '@dagu-mcp/contracts';
import { resumeRun } from '../runs/checkpoint-resume';
import { findPendingResumes } from '../store/checkpoint.repository';
import { runEventOf } from '../events/run-event-publisher';
import type { RunDeps } from '../runs/run-deps';
import { failOrphanedRuns } from '../store/run-ownership.repository';
import type { RunRecord } from '../store/run-rows';
import { isTransientPgFailure } from '@dagu-mcp/runtime';

/**
 * Recovery (issue "Recovery"): no run stays running after its replica died.
 * Every replica sweeps every `RUN_HEARTBEAT_MS`: a running run (or a run
 * waiting on a child's checkpoint, status 7 with an owner; a parked run has
 * none) whose owner's heartbeat is older than {@link STALE_HEARTBEATS} intervals (and that does not
 * run here) is ended **failed** with `run-service replica <owner> stopped
 * responding (no heartbeat for <n>s)`; its unfinished steps fail or abort
 * as on any forced end. A live owner stamps every interval, so a run is
 * failed at most (STALE_HEARTBEATS + 1) × `RUN_HEARTBEAT_MS` after its
 * replica's last heartbeat — 20 s with the defaults. Rows are claimed with
 * `FOR UPDATE SKIP LOCKED`, so replicas never fail a run twice.
 *
 * Grace after an outage: when PostgreSQL was unreachable,
 * every replica's heartbeats went stale together, the live ones included. So
 * a sweep fails no run during `RUN_RECOVERY_GRACE_MS` counted from the first
 * sweep that reached PostgreSQL again after one that could not, nor (in the
 * statement) within that long of PostgreSQL's own start — a restart between
 * two sweeps. Live replicas stamp within a heartbeat interval of their own
 * reconnection, so only runs of replicas that are really gone are failed,
 * at most `RUN_RECOVERY_GRACE_MS` + 4 × `RUN_HEARTBEAT_MS` after the outage.
 *
 * The same sweep starts the resume of a checkpoint decision whose replica
 * died between recording the decision and starting the new attempt
 * (`humanTaskResumePending`).
 */

/** Heartbeat intervals after which a running run's owner counts as gone. */
export const STALE_HEARTBEATS = 3;

/** Orphaned runs failed per sweep (one transaction); the rest wait for the next sweep. */
const ORPHANS_PER_SWEEP = 50;

/** Periodic orphan sweep of one replica. */
export class RecoverySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number[]> | undefined;
  /** Set by a sweep that could not reach PostgreSQL; the next one that can starts the grace. */
  private unreachable = false;
  /** No run is failed before this (epoch ms). */
  private graceUntil = 0;

  constructor(
    private readonly deps: RunDeps,
    private readonly isLocal: (pk: number) => boolean,
  ) {}

  /** Starts sweeping every heartbeat interval. */
  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep().finally(() => (this.running = undefined));
    }, this.deps.config.heartbeatMs);
    this.timer.unref();
  }

  /** Stops sweeping; waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
  }

  /** One sweep. @returns the pks of the runs it failed. Never rejects. */
  async sweep(): Promise<number[]> {
    const staleMs = STALE_HEARTBEATS * this.deps.config.heartbeatMs;
    const failed: number[] = [];
    try {
      const reconnecting = this.unreachable;
      // No run is failed in the sweep that may be the first to reach PostgreSQL again.
      if (reconnecting) this.graceUntil = Date.now() + this.deps.config.recoveryGraceMs;
      const ended = await this.failOrphans(staleMs);
      for (const run of ended) {
        failed.push(run.pk);
        this.deps.logger.warn(
          { runPk: run.pk, owner: run.owner },
          'orphaned run failed: its replica stopped responding',
        );
        await this.deps.publisher.publish(
          runEventOf({ dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId: run.attempt_id }, RunStatus.failed),
        );
      }
      const pendingResumes = await findPendingResumes(this.deps.pool, staleMs);
      if (reconnecting) {
        // Reached it: the grace counts from now.
        this.unreachable = false;
        this.graceUntil = Date.now() + this.deps.config.recoveryGraceMs;
        this.deps.logger.info(
          { graceMs: this.deps.config.recoveryGraceMs },
          'PostgreSQL reachable again: no run is failed for a stale heartbeat during the grace period',
        );
      }
      for (const pending of pendingResumes) {
        this.deps.logger.info({ runPk: pending.pk }, 'starting a pending resume after a checkpoint decision');
        await resumeRun(this.deps, pending.pk);
      }
    } catch (error) {
      if (isTransientPgFailure(error)) this.unreachable = true;
      this.deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'recovery sweep failed');
    }
    return failed;
  }

  private async failOrphans(staleMs: number): Promise<RunRecord[]> {
    if (Date.now() < this.graceUntil) return [];
    return failOrphanedRuns(
      this.deps.pool,
      staleMs,
      ORPHANS_PER_SWEEP,
      (pk) => this.isLocal(pk),
      (orphan) =>
        `run-service replica ${orphan.owner ?? '(none)'} stopped responding (no heartbeat for ${Math.floor(orphan.ageSeconds)}s); the run was failed by replica ${this.deps.replica}`,
      this.deps.config.recoveryGraceMs,
    );
  }
}
