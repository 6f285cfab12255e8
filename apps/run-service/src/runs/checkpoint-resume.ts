import {
  DaguError,
  requireMutationRole,
  type RunRef,
  RunStatus,
  runStatusLabel,
  StepStatus,
} from '@dagu-mcp/contracts';
import type { HandlerContext } from '@dagu-mcp/bus';
import { withTransaction } from '@dagu-mcp/runtime';
import { fenceOf, type RecordMutation } from '@dagu-mcp/service-kit';
import { actorOf } from '../core/started-by';
import { dagOfSnapshot, nodesOfDag } from '../core/dag-nodes';
import { isStepDone } from '../core/status-rules';
import { runEventOf } from '../events/run-event-publisher';
import { formatUri, generateAttemptId } from '../core/run-id';
import { runRefOf, type RunDeps } from './run-deps';
import { mutate, runNotFound } from '../store/storage-errors';
import { findRun, findRunByPk, loadSteps } from '../store/run.repository';
import type { Queryable, RunRecord } from '../store/run-rows';
import { beginRetryAttempt } from '../store/run-retry.repository';
import { rewindTargetOf, rewoundSeqs } from '../engine/approval-rewind';
import {
  decideStep,
  findCheckpointStep,
  lockPendingResume,
  rejectRun,
  setResumePending,
  type CheckpointStepRow,
} from '../store/checkpoint.repository';
import type { Checkpoint } from '../core/checkpoint-types';
import { checkApprovalInput, checkRejectionInput, checkFormValues } from '../core/form-values';

/**
 * Decisions on checkpoints (issue "Checkpoints"; REST `…/human-task` and
 * `…/approval`): a completed human task or an approved gate makes the step
 * `succeeded` with the given values as its outputs, durably, with the run's
 * `resume_pending` flag set (021 `humanTaskResumePending`); then the run
 * resumes by itself — a new attempt, owned by this replica, that keeps every
 * finished step and runs the others. A rejected gate ends the step and the
 * run `rejected` (8); no handler runs — unless the gate names `rewind_to`:
 * then the run resumes the same way, running the steps from the rewind
 * target to the gate again, and the gate waits again (`approval-rewind.ts`).
 * A resume this replica could not start (it died in between) is started by
 * the recovery sweep of any replica.
 */

/** `run.humanTask` payload. */
export interface HumanTaskInput {
  dagName: string;
  dagRunId: string;
  stepName: string;
  values?: Record<string, unknown>;
}

/** `run.approval` payload. */
export interface ApprovalInput {
  dagName: string;
  dagRunId: string;
  stepName: string;
  decision: 'approve' | 'reject';
  input?: Record<string, string>;
}

/** A recorded decision: the run, its end when a rejection ended it, and when the step began to wait. */
type Decided = { run: RunRecord; rejected?: Date; waitingSince?: Date | null };

/** Reports how long a checkpoint waited for the decision just recorded (`dagu_checkpoint_wait_seconds`). */
function observeWait(deps: RunDeps, kind: Checkpoint['kind'], outcome: string, waitingSince: Date | null | undefined) {
  if (waitingSince == null) return;
  deps.metrics?.checkpointDecided(kind, outcome, (Date.now() - waitingSince.getTime()) / 1000);
}

async function decide(
  deps: RunDeps,
  address: { dagName: string; dagRunId: string; stepName: string },
  ctx: HandlerContext,
  kind: Checkpoint['kind'],
  apply: (
    db: Queryable,
    run: RunRecord,
    step: CheckpointStepRow & { checkpoint: Checkpoint },
    record: RecordMutation,
  ) => Promise<Decided>,
): Promise<Decided> {
  return mutate(deps.pool, fenceOf(ctx), async (client, record) => {
    const run = await findRun(client, address.dagName, address.dagRunId, true);
    if (run === undefined) throw runNotFound(address.dagName, address.dagRunId);
    const step = await findCheckpointStep(client, run.pk, run.attempt_no, address.stepName);
    if (step === undefined)
      throw new DaguError('resource_not_found', `The run ${address.dagRunId} has no step ${address.stepName}.`, {
        field: 'stepName',
      });
    const what = kind === 'human_task' ? 'a human task' : 'an approval';
    if (
      run.status !== RunStatus.waiting ||
      step.status !== StepStatus.waiting ||
      step.checkpoint === null ||
      step.checkpoint.kind !== kind
    ) {
      throw new DaguError(
        'conflict',
        `The step ${address.stepName} is not waiting on ${what} (the run is ${runStatusLabel(run.status)}).`,
        { field: 'stepName' },
      );
    }
    return apply(client, run, { ...step, checkpoint: step.checkpoint }, record);
  });
}

function invalid(field: string, errors: string[]): DaguError {
  return new DaguError('invalid_tool_input', `Invalid ${field}: ${errors.join('; ')}.`, { field, details: { errors } });
}

/** `run.humanTask`: validates `values` against the form, records them, resumes the run. */
export async function completeHumanTask(deps: RunDeps, input: HumanTaskInput, ctx: HandlerContext): Promise<RunRef> {
  requireMutationRole(ctx.principal, 'run.humanTask');
  const { run, waitingSince } = await decide(deps, input, ctx, 'human_task', async (db, run, step, record) => {
    const form = step.checkpoint.kind === 'human_task' ? step.checkpoint.form : undefined;
    const check = checkFormValues(form, input.values ?? {});
    if (!check.ok) throw invalid('values', check.errors);
    const checkpoint: Checkpoint = {
      ...step.checkpoint,
      decided: {
        decision: 'completed',
        values: check.outputs,
        at: new Date().toISOString(),
        by: actorOf(ctx.principal),
      },
    };
    await decideStep(
      db,
      { runPk: run.pk, attemptNo: run.attempt_no, seq: step.seq },
      { status: StepStatus.succeeded, outputs: check.outputs, checkpoint },
    );
    await recordDecision(record, run, step.name, 'checkpoint.human_task.completed');
    await setResumePending(db, run.pk, true);
    return { run, waitingSince: step.started_at };
  });
  observeWait(deps, 'human_task', 'completed', waitingSince);
  return resumeOrReport(deps, run);
}

/**
 * `run.approval`: approve (record input, resume) or reject (end the run
 * `rejected`; with `rewind_to`: resume, running the rewound steps again).
 */
export async function decideApproval(deps: RunDeps, input: ApprovalInput, ctx: HandlerContext): Promise<RunRef> {
  requireMutationRole(ctx.principal, 'run.approval');
  const { run, rejected, waitingSince } = await decide(deps, input, ctx, 'approval', async (db, run, step, record) => {
    const gate = step.checkpoint;
    const values = input.input ?? {};
    const address = { runPk: run.pk, attemptNo: run.attempt_no, seq: step.seq };
    const at = new Date().toISOString();
    const by = actorOf(ctx.principal);
    if (input.decision === 'reject') {
      const rejection =
        gate.kind === 'approval' ? checkRejectionInput(gate.input, values) : { ok: true as const, outputs: values };
      if (!rejection.ok) throw invalid('input', rejection.errors);
      await decideStep(db, address, {
        status: StepStatus.rejected,
        outputs: {},
        checkpoint: { ...gate, decided: { decision: 'rejected', values: rejection.outputs, at, by } },
      });
      await recordDecision(record, run, step.name, 'checkpoint.approval.rejected');
      if (rewindTargetOf(dagOfSnapshot(run.spec, run.dag_name), step.name) !== undefined) {
        await setResumePending(db, run.pk, true);
        return { run, waitingSince: step.started_at };
      }
      const finished = await rejectRun(
        db,
        { pk: run.pk, attemptNo: run.attempt_no },
        `the approval of step ${step.name} was rejected`,
      );
      return finished !== undefined
        ? { run, rejected: finished, waitingSince: step.started_at }
        : { run, waitingSince: step.started_at };
    }
    const check =
      gate.kind === 'approval'
        ? checkApprovalInput(gate.input, gate.required, values)
        : { ok: true as const, outputs: values };
    if (!check.ok) throw invalid('input', check.errors);
    await decideStep(db, address, {
      status: StepStatus.succeeded,
      outputs: check.outputs,
      checkpoint: { ...gate, decided: { decision: 'approved', values: check.outputs, at, by } },
    });
    await recordDecision(record, run, step.name, 'checkpoint.approval.approved');
    await setResumePending(db, run.pk, true);
    return { run, waitingSince: step.started_at };
  });
  observeWait(deps, 'approval', input.decision === 'reject' ? 'rejected' : 'approved', waitingSince);
  if (rejected !== undefined) {
    await deps.publisher.publish(
      runEventOf(
        { dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId: run.attempt_id },
        RunStatus.rejected,
        rejected,
      ),
    );
    return runRefOf({
      dagName: run.dag_name,
      dagRunId: run.dag_run_id,
      attemptId: run.attempt_id,
      status: RunStatus.rejected,
    });
  }
  return resumeOrReport(deps, run);
}

/** The decision's audit row, in the decision's own transaction (values stay out: they may be sensitive). */
function recordDecision(record: RecordMutation, run: RunRecord, stepName: string, action: string) {
  return record({
    action,
    target: formatUri.run(run.dag_name, run.dag_run_id),
    details: { stepName, attemptId: run.attempt_id },
  });
}

async function resumeOrReport(deps: RunDeps, run: RunRecord): Promise<RunRef> {
  try {
    const attemptId = await resumeRun(deps, run.pk);
    if (attemptId !== undefined)
      return runRefOf({ dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId, status: RunStatus.running });
  } catch (error) {
    deps.logger.warn(
      { err: error instanceof Error ? error.message : String(error), runPk: run.pk },
      'resume after a decision failed; the recovery sweep retries it',
    );
  }
  return runRefOf({
    dagName: run.dag_name,
    dagRunId: run.dag_run_id,
    attemptId: run.attempt_id,
    status: RunStatus.waiting,
  });
}

/**
 * Resumes a waiting run whose decision is recorded (`resume_pending`): a new
 * attempt keeps the finished steps (but not the rewind set of a rejected
 * approval with `rewind_to`) and runs the rest, here.
 * @returns the new attempt id, or `undefined` when there was nothing to resume.
 */
export async function resumeRun(deps: RunDeps, pk: number): Promise<string | undefined> {
  const resumed = await withTransaction(deps.pool, async (client) => {
    if (!(await lockPendingResume(client, pk))) return undefined;
    const run = await findRunByPk(client, pk);
    if (run === undefined) return undefined;
    const rows = await loadSteps(client, run.pk, run.attempt_no);
    const dag = dagOfSnapshot(run.spec, run.dag_name);
    const nodes = nodesOfDag(dag);
    // A rejected approval with rewind_to: its rewind set runs again.
    const rewound = rewoundSeqs(dag, nodes.steps, rows);
    const done = new Set(
      rows
        .filter((row) => row.handler === null && isStepDone(row.status) && !rewound.has(row.seq))
        .map((row) => row.seq),
    );
    const attemptId = generateAttemptId();
    await beginRetryAttempt(client, {
      runPk: run.pk,
      previousAttemptNo: run.attempt_no,
      attemptId,
      owner: deps.replica,
      keep: [...done],
      fresh: [...nodes.steps.filter((node) => !done.has(node.seq)), ...nodes.handlers.values()],
      includeDownstream: false,
    });
    await setResumePending(client, run.pk, false);
    return { run, attemptId };
  });
  if (resumed === undefined) return undefined;
  const { run, attemptId } = resumed;
  await deps.publisher.publish(
    runEventOf({ dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId }, RunStatus.running),
  );
  deps.engine.launch(run.pk);
  return attemptId;
}
