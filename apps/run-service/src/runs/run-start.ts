import {
  DaguError,
  LATEST_RUN_ID,
  requireMutationRole,
  type RunRef,
  type RunStartRequest,
  RunStatus,
} from '@dagu-mcp/contracts';
import { deadlinePassedError, type HandlerContext } from '@dagu-mcp/bus';
import { parseDagSpecMemo } from '../core/dag-spec-memo';
import { recordMutation, withTransaction } from '@dagu-mcp/runtime';
import { actorOf } from '../core/started-by';
import { nodesOfDag } from '../core/dag-nodes';
import { formatParams, mergeParams } from '../core/params';
import { runEventOf } from '../events/run-event-publisher';
import { formatUri, generateAttemptId, generateRunId } from '../core/run-id';
import { isUniqueViolation } from '@dagu-mcp/runtime';
import { withStorageErrors } from '../store/pg-errors';
import { findRun, hasActiveRun, insertRun, lockDagName, requestIdOf } from '../store/run.repository';
import { runRefOf, type RunDeps } from './run-deps';
import { resolveRunProfile } from './profile-commands';
import { workspaceOfLabels } from '../core/workspace';

/**
 * `run.start` (036 start / enqueue). Validates the spec (dagu-model §4),
 * merges the params, and records the run — `running` and owned by this
 * replica for a start, `queued` for an enqueue — in one transaction that
 * commits only before the request's deadline. Then it publishes the run
 * event and returns at once: a start is executed in the background by this
 * replica's engine, an enqueue by whichever replica's dispatcher claims it.
 *
 * Errors: `invalid_tool_input` — the spec is invalid (field `spec`,
 * `details.errors` = dag-spec's messages), a param is (field `params` or
 * `params.<NAME>`), or `dagRunId` is `latest` (reserved for reads);
 * `conflict` — the `dagRunId` is already used by this DAG, or `singleton`
 * and a run of this DAG is running, queued or waiting;
 * `resource_unavailable` — PostgreSQL is down or the deadline passed.
 *
 * Safe to run twice: a re-delivered job (same bus job id) gets the run it
 * created the first time.
 */
export async function startRun(deps: RunDeps, request: RunStartRequest, ctx: HandlerContext): Promise<RunRef> {
  deps.engine.launchGate.enter();
  try {
    return await acceptStart(deps, request, ctx);
  } finally {
    deps.engine.launchGate.leave();
  }
}

async function acceptStart(deps: RunDeps, request: RunStartRequest, ctx: HandlerContext): Promise<RunRef> {
  // Checked here, not only by the gateway: the scheduler starts runs through this function too (docs/security.md).
  requireMutationRole(ctx.principal, request.inline ? 'run.start.inline' : 'run.start');
  const parsed = parseDagSpecMemo(request.spec, request.dagName);
  if (!parsed.valid || parsed.dag === undefined) {
    const first = parsed.errors[0] ?? 'invalid DAG';
    throw new DaguError('invalid_tool_input', `The DAG spec is invalid: ${first}`, {
      field: 'spec',
      details: { errors: parsed.errors },
    });
  }
  const dag = parsed.dag;
  const merged = mergeParams(dag.params, request.params);
  if (request.dagRunId === LATEST_RUN_ID) {
    // Reads resolve `latest` to the DAG's latest run, so no run may be recorded under it.
    throw new DaguError('invalid_tool_input', latestRefused, { field: 'dagRunId' });
  }
  const dagRunId = request.dagRunId ?? generateRunId();
  const attemptId = generateAttemptId();
  const status = request.enqueue ? RunStatus.queued : RunStatus.running;
  const labels = [...new Set([...dag.labels, ...(request.labels ?? [])])];
  // The caller's profile, else the DAG's, else its workspace's (Dagu spec 022b); recorded with the run.
  const profile = await withStorageErrors(() =>
    resolveRunProfile(deps.pool, request.dagName, workspaceOfLabels(dag.labels), request.profile),
  );
  const created = await withStorageErrors(async () => {
    try {
      return await withTransaction(
        deps.pool,
        async (client) => {
          // A run id this call generated cannot be taken yet: look only for a caller's own id
          // (a re-delivered job gets the run it created; anyone else gets `conflict`).
          const existing =
            request.dagRunId === undefined ? undefined : await findRun(client, request.dagName, dagRunId);
          if (existing !== undefined) {
            if ((await requestIdOf(client, existing.pk)) === ctx.jobId)
              return { status: existing.status, attemptId: existing.attempt_id, fresh: undefined };
            throw runIdUsed(request.dagName, dagRunId);
          }
          if (request.singleton === true) {
            await lockDagName(client, request.dagName);
            if (await hasActiveRun(client, request.dagName)) {
              throw new DaguError(
                'conflict',
                `A run of DAG ${request.dagName} is already running or queued (singleton).`,
                { field: 'singleton' },
              );
            }
          }
          const inserted = await insertRun(client, {
            dagName: request.dagName,
            dagRunId,
            attemptId,
            status,
            params: formatParams(merged),
            mergedParams: merged,
            labels,
            queue: request.queue ?? dag.queue ?? 'default',
            maxActiveRuns: dag.maxActiveRuns,
            inline: request.inline,
            spec: request.spec,
            normalized: dag,
            nodes: nodesOfDag(dag).all,
            requestId: ctx.jobId,
            ...(status === RunStatus.running ? { owner: deps.replica } : {}),
            startedBy: actorOf(ctx.principal),
            ...(profile !== null ? { profile } : {}),
          });
          await recordMutation(client, ctx, {
            action: request.enqueue ? 'run.enqueued' : 'run.started',
            target: formatUri.run(request.dagName, dagRunId),
            details: {
              attemptId,
              inline: request.inline,
              ...(request.queue !== undefined ? { queue: request.queue } : {}),
              ...(profile !== null ? { profile } : {}),
            },
          });
          return { status, attemptId, fresh: inserted };
        },
        { deadline: ctx.deadline, onLate: deadlinePassedError },
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw runIdUsed(request.dagName, dagRunId);
      throw error;
    }
  });
  const fresh = created.fresh;
  if (fresh !== undefined) {
    // startRun creates root runs only (children come from composition/child-runner.ts).
    deps.publisher.noteRootRun?.(request.dagName, dagRunId);
    await deps.publisher.publish(runEventOf({ dagName: request.dagName, dagRunId, attemptId }, status));
    // The engine plans the attempt from the rows just written, without reading them back, and executes it once
    // the other starts in flight are answered (at most RUN_LAUNCH_HOLD_MS); the run is the engine's from here
    // on, so a stop or a shutdown meanwhile reaches it (issue 28).
    if (status === RunStatus.running) deps.engine.launch(fresh.pk, fresh);
    else deps.engine.pokeQueue();
  }
  return runRefOf({ dagName: request.dagName, dagRunId, attemptId: created.attemptId, status: created.status });
}

const latestRefused = `The run id "${LATEST_RUN_ID}" names the latest run of a DAG when reading; a new run cannot take it.`;

function runIdUsed(dagName: string, dagRunId: string): DaguError {
  return new DaguError('conflict', `The run id ${dagRunId} is already used by DAG ${dagName}.`, { field: 'dagRunId' });
}
