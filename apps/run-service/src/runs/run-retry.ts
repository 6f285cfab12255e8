import {
  ACTIVE_RUN_STATUSES,
  DaguError,
  requireMutationRole,
  type RunRef,
  RunStatus,
  runStatusLabel,
} from '@dagu-mcp/contracts';
import type { HandlerContext } from '@dagu-mcp/bus';
import { fenceOf } from '@dagu-mcp/service-kit';
import { dagOfSnapshot, nodesOfDag, retrySet } from '../core/dag-nodes';
import type { NodeSpec } from '../core/run-types';
import { runEventOf } from '../events/run-event-publisher';
import { formatUri, generateAttemptId } from '../core/run-id';
import { mutate, runNotFound } from '../store/storage-errors';
import { findRun } from '../store/run.repository';
import { beginRetryAttempt } from '../store/run-retry.repository';
import { runRefOf, type RunDeps } from './run-deps';

/** `run.retry` payload (contracts `RunRetryRequestSchema`). */
export interface RunRetryInput {
  dagName: string;
  dagRunId: string;
  stepName?: string;
  includeDownstream?: boolean;
}

/**
 * `run.retry` (036 retry): a new attempt of the same run id, run by this
 * replica with the run's spec snapshot and its params as first evaluated.
 *
 * - Whole retry (no `stepName`): every step and handler runs again.
 * - From `stepName`: that step (and with `includeDownstream` every step that
 *   depends on it, transitively) runs again; every other step keeps its
 *   result, outputs and logs from the previous attempt. `init` does not run
 *   again; the success/failure/abort and exit handlers do.
 *
 * Errors: `resource_not_found` (no such run); `conflict` (the run is running,
 * queued or waiting); `invalid_tool_input` on `stepName` (no such step in
 * the run's DAG); `resource_unavailable`.
 */
export async function retryRun(deps: RunDeps, input: RunRetryInput, ctx: HandlerContext): Promise<RunRef> {
  requireMutationRole(ctx.principal, 'run.retry');
  const result = await mutate(deps.pool, fenceOf(ctx), async (client, record) => {
    const run = await findRun(client, input.dagName, input.dagRunId, true);
    if (run === undefined) throw runNotFound(input.dagName, input.dagRunId);
    if (ACTIVE_RUN_STATUSES.includes(run.status)) {
      throw new DaguError(
        'conflict',
        `The run ${input.dagRunId} is ${runStatusLabel(run.status)}; retry it once it has ended.`,
        { field: 'dagRunId' },
      );
    }
    const nodes = nodesOfDag(dagOfSnapshot(run.spec, run.dag_name));
    let keep: number[] = [];
    let fresh: NodeSpec[] = nodes.all;
    if (input.stepName !== undefined) {
      const stepName = input.stepName;
      if (!nodes.steps.some((node) => node.name === stepName)) {
        throw new DaguError('invalid_tool_input', `The run's DAG has no step named ${stepName}.`, {
          field: 'stepName',
        });
      }
      const rerun = retrySet(
        nodes.steps.map((node) => node.step),
        stepName,
        input.includeDownstream === true,
      );
      keep = nodes.steps.filter((node) => !rerun.has(node.name)).map((node) => node.seq);
      fresh = [...nodes.steps.filter((node) => rerun.has(node.name)), ...nodes.handlers.values()];
    }
    const attemptId = generateAttemptId();
    await beginRetryAttempt(client, {
      runPk: run.pk,
      previousAttemptNo: run.attempt_no,
      attemptId,
      owner: deps.replica,
      keep,
      fresh,
      ...(input.stepName !== undefined ? { retryStep: input.stepName } : {}),
      includeDownstream: input.includeDownstream === true,
    });
    await record({
      action: 'run.retried',
      target: formatUri.run(run.dag_name, run.dag_run_id),
      details: {
        attemptId,
        ...(input.stepName !== undefined ? { stepName: input.stepName } : {}),
        ...(input.includeDownstream === true ? { includeDownstream: true } : {}),
      },
    });
    // `dagRunId` may be `latest` (store/run.repository.ts): the reply names the run it resolved to.
    return { pk: run.pk, attemptId, dagRunId: run.dag_run_id };
  });
  await deps.publisher.publish(
    runEventOf({ dagName: input.dagName, dagRunId: result.dagRunId, attemptId: result.attemptId }, RunStatus.running),
  );
  deps.engine.launch(result.pk);
  return runRefOf({
    dagName: input.dagName,
    dagRunId: result.dagRunId,
    attemptId: result.attemptId,
    status: RunStatus.running,
  });
}
