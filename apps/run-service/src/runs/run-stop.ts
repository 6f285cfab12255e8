import { DaguError, requireMutationRole, type RunRef, RunStatus, runStatusLabel } from '@dagu-mcp/contracts';
import type { HandlerContext } from '@dagu-mcp/bus';
import { fenceOf, type RecordMutation } from '@dagu-mcp/service-kit';
import { formatUri } from '../core/run-id';
import { runEventOf } from '../events/run-event-publisher';
import { mutate, runNotFound, withStorageErrors } from '../store/storage-errors';
import { abortQueuedRun, findRun } from '../store/run.repository';
import { forceEndRun, requestStop } from '../store/run-ownership.repository';
import type { RunRecord } from '../store/run-rows';
import { delay, runRefOf, waitAtMost, type RunDeps } from './run-deps';

/** How long `run.stop` waits for the run to end before it replies, in ms. */
export const STOP_WAIT_MS = 3000;

/**
 * `run.stop` (036 stop): aborts a running, waiting or queued run; its steps
 * end `aborted` and the run `aborted` (after its abort and exit handlers).
 *
 * - queued: the run ends `aborted` at once, without running anything;
 * - running here: the engine kills the steps' process groups;
 * - running on another replica: the stop is recorded and signalled to the
 *   owner; when the owner's heartbeat is older than three heartbeat
 *   intervals (the replica is gone) the run is ended `aborted` directly.
 *
 * The reply waits up to {@link STOP_WAIT_MS} (and never past the request's
 * deadline) for the run to end, then reports its status at that moment.
 *
 * Errors: `resource_not_found`; `invalid_tool_input` when the run is not
 * running, waiting or queued (036); `resource_unavailable`.
 */
export async function stopRun(
  deps: RunDeps,
  input: { dagName: string; dagRunId: string },
  ctx: HandlerContext,
): Promise<RunRef> {
  requireMutationRole(ctx.principal, 'run.stop');
  let run = await withStorageErrors(() => findRun(deps.pool, input.dagName, input.dagRunId));
  if (run === undefined) throw runNotFound(input.dagName, input.dagRunId);
  ctx.assertBeforeDeadline();
  if (run.status === RunStatus.queued) {
    const queued = run;
    const aborted = await mutate(deps.pool, fenceOf(ctx), async (client, record) => {
      const ended = await abortQueuedRun(client, queued.pk);
      if (ended !== undefined) await recordStop(record, ended, 'queued');
      return ended;
    });
    if (aborted !== undefined) {
      await deps.publisher.publish(runEventOf(refOf(aborted), RunStatus.aborted));
      return runRefOf({ ...refOf(aborted), status: RunStatus.aborted });
    }
    // Claimed by a dispatcher in between: stop it as a running run.
    run = (await withStorageErrors(() => findRun(deps.pool, input.dagName, input.dagRunId))) ?? queued;
  }
  if (run.status !== RunStatus.running && run.status !== RunStatus.waiting) {
    throw new DaguError(
      'invalid_tool_input',
      `The run ${input.dagRunId} is not running (it is ${runStatusLabel(run.status)}).`,
      { field: 'dagRunId' },
    );
  }
  const target = run;
  // The request is the change: recorded with its stop request, in one transaction.
  await mutate(deps.pool, fenceOf(ctx), async (client, record) => {
    await requestStop(client, target.pk);
    await recordStop(record, target, runStatusLabel(target.status));
  });
  const waitMs = Math.min(STOP_WAIT_MS, Math.max(0, ctx.remainingMs() - 500));
  const local = deps.engine.stopLocal(target.pk);
  if (local !== false) {
    await waitAtMost(local, waitMs);
  } else if (isOrphan(target, deps.config.heartbeatMs)) {
    const ended = await withStorageErrors(() =>
      forceEndRun(deps.pool, target.pk, RunStatus.aborted, 'the run was stopped (no replica was running it)'),
    );
    if (ended !== undefined) await deps.publisher.publish(runEventOf(refOf(ended), RunStatus.aborted));
  } else {
    await deps.requestRemoteStop(target.pk);
    await waitUntilEnded(deps, target, waitMs);
  }
  const latest = (await withStorageErrors(() => findRun(deps.pool, input.dagName, input.dagRunId))) ?? target;
  return runRefOf(refOf(latest));
}

/** The `run.stopped` row of a stop request (`was`: the run's status label when it was stopped). */
function recordStop(record: RecordMutation, run: RunRecord, was: string): Promise<void> {
  return record({
    action: 'run.stopped',
    target: formatUri.run(run.dag_name, run.dag_run_id),
    details: { attemptId: run.attempt_id, was },
  });
}

function refOf(run: RunRecord): { dagName: string; dagRunId: string; attemptId: string; status: number } {
  return { dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId: run.attempt_id, status: run.status };
}

/** A running run whose owner stopped stamping its heartbeat (or that never had one). */
function isOrphan(run: RunRecord, heartbeatMs: number): boolean {
  const beat = run.heartbeat_at ?? run.started_at;
  return run.owner === null || beat === null || Date.now() - beat.getTime() > 3 * heartbeatMs;
}

async function waitUntilEnded(deps: RunDeps, run: RunRecord, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    await delay(100);
    const current = await findRun(deps.pool, run.dag_name, run.dag_run_id);
    if (
      current === undefined ||
      ![RunStatus.running, RunStatus.waiting, RunStatus.queued].some((s) => s === current.status)
    )
      return;
  }
}
