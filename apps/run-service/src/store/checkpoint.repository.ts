import { type RunDetail, RunStatus, StepStatus } from '@dagu-mcp/contracts';
import { z } from 'zod';
import type { RunParam } from '../core/params';
import { parseFirstRow, parseRows, type Queryable } from './run-rows';
import { checkpointDetail, CheckpointSchema, type Checkpoint } from '../core/checkpoint-types';

const FinishedRowSchema = z.object({ finished_at: z.date() });
const PendingResumeRowSchema = z.object({ pk: z.coerce.number().int(), dag_name: z.string(), dag_run_id: z.string() });

/**
 * SQL of checkpoints (store/migrations.ts `002_engine_checkpoints`): parking an
 * attempt at status 7, the waiting steps of a run, recording a decision, the
 * `resume_pending` flag and the end of a rejected run.
 */

const WaitingStepRowSchema = z.object({
  seq: z.number().int(),
  name: z.string(),
  step_id: z.string().nullable(),
  status: z.number().int(),
  checkpoint: CheckpointSchema.nullable(),
  /** When the step started (for a checkpoint: when it began to wait); absent from the list query. */
  started_at: z.date().nullable().optional(),
});
/** A step row with its checkpoint. */
export type CheckpointStepRow = z.output<typeof WaitingStepRowSchema>;

const PendingRowSchema = z.object({ resume_pending: z.boolean() });

/**
 * Parks the current attempt: the run becomes `waiting` (7), keeps no owner
 * (no process runs; a stop or a decision ends or resumes it from any replica)
 * and stores the evaluated params. @returns false when the attempt was no longer current and running.
 */
export async function parkAttempt(
  db: Queryable,
  run: { pk: number; attemptNo: number },
  outcome: { params: string; resolvedParams: readonly RunParam[]; paramsEvaluated: boolean },
): Promise<boolean> {
  const result = await db.query(
    `WITH upd AS (
       UPDATE runs SET status = ${RunStatus.waiting}, error = NULL, params = $3, resolved_params = $4, params_evaluated = $5, owner = NULL, heartbeat_at = NULL
       WHERE pk = $1 AND attempt_no = $2 AND status = ${RunStatus.running} RETURNING pk
     ), att AS (
       UPDATE run_attempts SET status = ${RunStatus.waiting} WHERE run_pk = $1 AND attempt_no = $2
     )
     SELECT pk FROM upd`,
    [run.pk, run.attemptNo, outcome.params, JSON.stringify(outcome.resolvedParams), outcome.paramsEvaluated],
  );
  return result.rows.length > 0;
}

/** The steps of an attempt that carry a checkpoint (open or decided). */
export async function loadCheckpointSteps(
  db: Queryable,
  runPk: number,
  attemptNo: number,
): Promise<CheckpointStepRow[]> {
  const result = await db.query(
    'SELECT seq, name, step_id, status, checkpoint FROM run_steps WHERE run_pk = $1 AND attempt_no = $2 AND checkpoint IS NOT NULL ORDER BY seq',
    [runPk, attemptNo],
  );
  return parseRows(WaitingStepRowSchema, result);
}

/** The step `stepName` (name, else id) of an attempt, with its checkpoint, or `undefined`. */
export async function findCheckpointStep(
  db: Queryable,
  runPk: number,
  attemptNo: number,
  stepName: string,
): Promise<CheckpointStepRow | undefined> {
  const result = await db.query(
    `SELECT seq, name, step_id, status, checkpoint, started_at FROM run_steps
     WHERE run_pk = $1 AND attempt_no = $2 AND handler IS NULL AND (name = $3 OR step_id = $3) ORDER BY (name = $3) DESC LIMIT 1`,
    [runPk, attemptNo, stepName],
  );
  return parseFirstRow(WaitingStepRowSchema, result);
}

/** True when accepted input of the run waits for its resume (021 `humanTaskResumePending`). */
export async function isResumePending(db: Queryable, runPk: number): Promise<boolean> {
  const result = await db.query('SELECT resume_pending FROM runs WHERE pk = $1', [runPk]);
  return parseFirstRow(PendingRowSchema, result)?.resume_pending ?? false;
}

/** Records a decision on a waiting step: its final status, outputs and the decided checkpoint. */
export async function decideStep(
  db: Queryable,
  step: { runPk: number; attemptNo: number; seq: number },
  decided: { status: number; outputs: Record<string, string>; checkpoint: Checkpoint },
): Promise<void> {
  await db.query(
    `UPDATE run_steps SET status = $4, finished_at = now(), error = NULL, checkpoint = $5,
       outputs = CASE WHEN $6::jsonb = '{}'::jsonb THEN outputs ELSE jsonb_set(outputs, '{outputs}', COALESCE(outputs->'outputs', '{}'::jsonb) || $6::jsonb) END
     WHERE run_pk = $1 AND attempt_no = $2 AND seq = $3`,
    [
      step.runPk,
      step.attemptNo,
      step.seq,
      decided.status,
      JSON.stringify(decided.checkpoint),
      JSON.stringify(decided.outputs),
    ],
  );
}

/** Sets or clears the run's `resume_pending` flag. */
export async function setResumePending(db: Queryable, runPk: number, pending: boolean): Promise<void> {
  await db.query(
    'UPDATE runs SET resume_pending = $2, heartbeat_at = CASE WHEN $2 THEN now() ELSE heartbeat_at END WHERE pk = $1',
    [runPk, pending],
  );
}

/** Ends a waiting run `rejected` (8). @returns the finish time, or `undefined` when it was no longer waiting. */
export async function rejectRun(
  db: Queryable,
  run: { pk: number; attemptNo: number },
  error: string,
): Promise<Date | undefined> {
  const result = await db.query(
    `WITH upd AS (
       UPDATE runs SET status = ${RunStatus.rejected}, error = $3, finished_at = now(), resume_pending = false WHERE pk = $1 AND attempt_no = $2 AND status = ${RunStatus.waiting} RETURNING finished_at
     ), att AS (
       UPDATE run_attempts SET status = ${RunStatus.rejected}, finished_at = now() WHERE run_pk = $1 AND attempt_no = $2
     )
     SELECT finished_at FROM upd`,
    [run.pk, run.attemptNo, error],
  );
  return parseFirstRow(FinishedRowSchema, result)?.finished_at;
}

/** Runs whose accepted input still waits for its resume (a replica died in between), oldest first. */
export async function findPendingResumes(
  db: Queryable,
  olderThanMs: number,
): Promise<Array<{ pk: number; dagName: string; dagRunId: string }>> {
  const result = await db.query(
    `SELECT pk, dag_name, dag_run_id FROM runs WHERE status = ${RunStatus.waiting} AND resume_pending
       AND COALESCE(heartbeat_at, created_at) < now() - ($1::int * interval '1 millisecond') ORDER BY pk LIMIT 20`,
    [olderThanMs],
  );
  return parseRows(PendingResumeRowSchema, result).map((row) => ({
    pk: row.pk,
    dagName: row.dag_name,
    dagRunId: row.dag_run_id,
  }));
}

/**
 * Adds the checkpoint fields of 021 to a run detail: on a waiting step its
 * open `humanTask {prompt, form}` or `approval {prompt, input, required}`
 * and how to answer it (`answer {method, path, role, surface}`, dagu-model §5),
 * and on the run `humanTaskResumePending` (accepted input is durable, the
 * resume attempt is not started yet). Only a waiting run (7) has them, so
 * other runs cost no extra query.
 */
export async function withCheckpoints(
  db: Queryable,
  run: { pk: number; attempt_no: number; status: number; dag_name: string; dag_run_id: string },
  detail: RunDetail,
): Promise<RunDetail> {
  if (run.status !== RunStatus.waiting) return detail;
  const [rows, pending] = await Promise.all([
    loadCheckpointSteps(db, run.pk, run.attempt_no),
    isResumePending(db, run.pk),
  ]);
  const open = new Map(
    rows
      .filter(
        (row) => row.status === StepStatus.waiting && row.checkpoint !== null && row.checkpoint.decided === undefined,
      )
      .map((row) => [row.name, row.checkpoint]),
  );
  const steps = detail.steps.map((step) => {
    const checkpoint = open.get(step.name);
    if (checkpoint === undefined || checkpoint === null) return step;
    const address = { dagName: run.dag_name, dagRunId: run.dag_run_id, stepName: step.name };
    return { ...step, ...checkpointDetail(checkpoint, address) };
  });
  return { ...detail, steps, humanTaskResumePending: pending };
}

/**
 * Locks run `pk` (`FOR UPDATE`, inside the caller's transaction) when it waits
 * with a recorded decision (`resume_pending`). @returns false when it does not
 * (already resumed by another replica, stopped, or never decided).
 */
export async function lockPendingResume(db: Queryable, pk: number): Promise<boolean> {
  const locked = await db.query(
    `SELECT pk FROM runs WHERE pk = $1 AND status = ${RunStatus.waiting} AND resume_pending FOR UPDATE`,
    [pk],
  );
  return locked.rows.length > 0;
}
