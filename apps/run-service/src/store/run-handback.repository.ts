import { RunStatus, StepStatus } from '@dagu-mcp/contracts';
import type { RunParam } from '../core/params';
import type { NodeSpec } from '../core/run-types';
import { beginRetryAttempt } from './run-retry.repository';
import { parseRunRow, RUN_COLUMNS, type Queryable, type RunRecord } from './run-rows';

/**
 * The hand-back of a run its replica could not finish before it stopped
 * (SIGTERM past `RUN_STOP_GRACE_MS`; `engine/hand-back.ts`). One
 * transaction on the locked run row:
 *
 * - the interrupted attempt ends: its status becomes 3 (`aborted`); of its
 *   steps that did not finish before the kill, the started ones become 3
 *   with `error` saying why, the never-started ones 0 (`not_started`);
 * - a new attempt is written like a resume (`beginRetryAttempt`): the steps
 *   that finished are copied with their results and logs, the others and
 *   every handler start fresh;
 * - the run goes back to the queue: status 5 (`queued`), no owner, no
 *   heartbeat, `started_at` cleared, `handed_back` set. A dispatcher of any
 *   replica claims it and runs the new attempt; the run was already admitted,
 *   so queue and `max_active_runs` limits do not hold it back
 *   (`claimQueuedRuns`).
 *
 * Nothing happens when the attempt is no longer current, running and owned
 * by `owner`, or a stop was requested for it (a stop wins: the caller ends
 * the run as usual).
 */

/** What the hand-back writes. */
export interface HandBackWrite {
  pk: number;
  /** The interrupted attempt. */
  attemptNo: number;
  /** The stopping replica (must still own the run). */
  owner: string;
  /** Id of the new attempt. */
  attemptId: string;
  /** `seq` of the steps that finished before the kill: kept. */
  keep: readonly number[];
  /** Steps that run again, and every handler. */
  fresh: readonly NodeSpec[];
  /** `error` of the interrupted steps in the old attempt. */
  error: string;
  /** Params as the interrupted attempt evaluated them (the next attempt reuses them); absent = unchanged. */
  params?: { text: string; resolved: readonly RunParam[]; evaluated: boolean };
}

/** @returns the queued run (new attempt), or `undefined` when it was not handed back. */
export async function handBackRun(db: Queryable, write: HandBackWrite): Promise<RunRecord | undefined> {
  const locked = await db.query(
    `SELECT pk FROM runs WHERE pk = $1 AND attempt_no = $2 AND status = ${RunStatus.running} AND owner = $3 AND stop_requested_at IS NULL FOR UPDATE`,
    [write.pk, write.attemptNo, write.owner],
  );
  if (locked.rows.length === 0) return undefined;
  await db.query(
    `UPDATE run_steps SET status = CASE WHEN started_at IS NULL THEN ${StepStatus.notStarted} ELSE ${StepStatus.aborted} END,
       error = CASE WHEN started_at IS NULL THEN NULL ELSE $4 END,
       finished_at = CASE WHEN started_at IS NULL THEN NULL ELSE COALESCE(finished_at, now()) END
     WHERE run_pk = $1 AND attempt_no = $2 AND handler IS NULL AND NOT (seq = ANY($3::int[]))`,
    [write.pk, write.attemptNo, write.keep, write.error],
  );
  await db.query(
    `UPDATE run_attempts SET status = ${RunStatus.aborted}, finished_at = now() WHERE run_pk = $1 AND attempt_no = $2`,
    [write.pk, write.attemptNo],
  );
  if (write.params !== undefined) {
    await db.query('UPDATE runs SET params = $2, resolved_params = $3, params_evaluated = $4 WHERE pk = $1', [
      write.pk,
      write.params.text,
      JSON.stringify(write.params.resolved),
      write.params.evaluated,
    ]);
  }
  const attemptNo = await beginRetryAttempt(db, {
    runPk: write.pk,
    previousAttemptNo: write.attemptNo,
    attemptId: write.attemptId,
    owner: write.owner,
    keep: write.keep,
    fresh: write.fresh,
    includeDownstream: false,
  });
  await db.query(`UPDATE run_attempts SET status = ${RunStatus.queued} WHERE run_pk = $1 AND attempt_no = $2`, [
    write.pk,
    attemptNo,
  ]);
  const result = await db.query(
    `UPDATE runs SET status = ${RunStatus.queued}, owner = NULL, heartbeat_at = NULL, started_at = NULL, handed_back = true WHERE pk = $1 RETURNING ${RUN_COLUMNS}`,
    [write.pk],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : parseRunRow(row);
}
