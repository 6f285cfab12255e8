import { RunStatus } from '@dagu-mcp/contracts';
import type { NodeSpec } from '../core/run-types';
import { insertFreshSteps } from './run.repository';
import type { Queryable } from './run-rows';

/**
 * A new attempt of an existing run (036 retry): the run keeps its id, gets a
 * new attempt number and id, and is running again, owned by the replica that
 * handled the retry. Nodes kept from the previous attempt (a retry from a
 * step) are copied with their results and log streams; the others start
 * fresh with new log streams.
 */

/** What the new attempt is made of. */
export interface RetryWrite {
  runPk: number;
  previousAttemptNo: number;
  attemptId: string;
  owner: string;
  /** `seq` of the nodes whose results are kept. */
  keep: readonly number[];
  /** Nodes that run again (and every handler). */
  fresh: readonly NodeSpec[];
  retryStep?: string;
  includeDownstream: boolean;
}

/**
 * Writes the new attempt (kept steps keep their checkpoint too: a decided
 * one shows its `decision` in every later attempt, dagu-model §5); call inside the transaction that locked the run row
 * (its start time is taken after that lock, with `clock_timestamp()`).
 * @returns the new attempt number.
 */
export async function beginRetryAttempt(db: Queryable, write: RetryWrite): Promise<number> {
  const attemptNo = write.previousAttemptNo + 1;
  await db.query(
    `UPDATE runs SET attempt_no = $2, attempt_id = $3, status = ${RunStatus.running}, error = NULL, started_at = clock_timestamp(), finished_at = NULL,
       owner = $4, heartbeat_at = clock_timestamp(), stop_requested_at = NULL
     WHERE pk = $1`,
    [write.runPk, attemptNo, write.attemptId, write.owner],
  );
  await db.query(
    `INSERT INTO run_attempts (run_pk, attempt_no, attempt_id, retry_step, include_downstream, status) VALUES ($1, $2, $3, $4, $5, ${RunStatus.running})`,
    [write.runPk, attemptNo, write.attemptId, write.retryStep ?? null, write.includeDownstream],
  );
  if (write.keep.length > 0) {
    await db.query(
      `INSERT INTO run_steps (run_pk, attempt_no, seq, name, step_id, handler, status, error, started_at, finished_at, retry_count,
                              exit_code, allowed_failure, outputs, stdout_log, stderr_log, checkpoint)
       SELECT run_pk, $3, seq, name, step_id, handler, status, error, started_at, finished_at, retry_count,
              exit_code, allowed_failure, outputs, stdout_log, stderr_log, checkpoint
       FROM run_steps WHERE run_pk = $1 AND attempt_no = $2 AND seq = ANY($4::int[])`,
      [write.runPk, write.previousAttemptNo, attemptNo, write.keep],
    );
  }
  await insertFreshSteps(db, write.runPk, attemptNo, write.fresh);
  return attemptNo;
}
