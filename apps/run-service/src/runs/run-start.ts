import {
  DaguError,
  LATEST_RUN_ID,
  requireMutationRole,
  type RunRef,
  type RunStartRequest,
  RunStatus,
} from '@dagu-mcp/contracts';
import { deadlinePassedError, type HandlerContext } from '@dagu-mcp/bus';
import type { NormalizedDag } from '@dagu-mcp/dag-spec';
import { parseDagSpecOffThread } from '../core/dag-spec-threads';
import {
  idempotencyInFlight,
  isIdempotencyViolation,
  markReplyRecorded,
  type MutationEntry,
  mutationRecordInsert,
} from '@dagu-mcp/runtime';
import { fenceOf } from '@dagu-mcp/service-kit';
import { actorOf } from '../core/started-by';
import { nodesOfDag } from '../core/dag-nodes';
import { formatParams, mergeParams } from '../core/params';
import { runEventOf } from '../events/run-event-publisher';
import { formatUri, generateAttemptId, generateRunId } from '../core/run-id';
import { isUniqueViolation } from '@dagu-mcp/runtime';
import { mutate, withStorageErrors } from '../store/storage-errors';
import {
  findRun,
  hasActiveRun,
  type InsertedRun,
  insertRun,
  lockDagName,
  type NewRun,
  requestIdOf,
} from '../store/run.repository';
import type { Queryable } from '../store/run-rows';
import { runRefOf, type RunDeps } from './run-deps';
import { resolveRunProfile } from './profile-commands';
import { workspaceOfLabels } from '../core/workspace';
import { lowDiskReason } from '../engine/disk-guard';

/**
 * `run.start` (036 start / enqueue). Takes the spec given, or reads the
 * stored DAG's (runs/stored-dag-specs.ts), validates it (dagu-model §4),
 * merges the params, and records the run — `running` and owned by this
 * replica for a start, `queued` for an enqueue — with its mutation record,
 * never after the request's deadline: in one statement when the run id is
 * generated here and the start has neither `singleton` nor an idempotency
 * key, else in one transaction. Then it publishes the run
 * event and returns at once: a start is executed in the background by this
 * replica's engine, an enqueue by whichever replica's dispatcher claims it.
 *
 * Errors: `resource_not_found` — no stored DAG `dagName` (a start by name;
 * `details.didYouMean` from dag-service); `invalid_tool_input` — the spec is
 * invalid or an inline start has none (field `spec`,
 * `details.errors` = dag-spec's messages), a param is (field `params` or
 * `params.<NAME>`), or `dagRunId` is `latest` (reserved for reads);
 * `conflict` — the `dagRunId` is already used by this DAG, or `singleton`
 * and a run of this DAG is running, queued or waiting;
 * `resource_unavailable` — PostgreSQL is down, the deadline passed, or
 * dag-service did not answer the read of a stored DAG (`details.service`).
 *
 * Safe to run twice: a re-delivered job (same bus job id) gets the run it
 * created the first time.
 */
export async function startRun(deps: RunDeps, request: RunStartRequest, ctx: HandlerContext): Promise<RunRef> {
  // Checked here, not only by the gateway: the scheduler starts runs through this function too (docs/security.md).
  requireMutationRole(ctx.principal, request.inline ? 'run.start.inline' : 'run.start');
  // Read and parsed before the launch gate: a wait on dag-service is not work that should hold other runs back.
  let planned: { spec: string; dag: NormalizedDag };
  try {
    planned = await plannedDag(deps, request, ctx);
  } catch (error) {
    // A re-delivered job whose DAG was deleted or broken since its first delivery still gets its run.
    const again = request.dagRunId === undefined ? undefined : await redeliveredRun(deps, request, ctx);
    if (again !== undefined) return again;
    throw error;
  }
  deps.engine.launchGate.enter();
  try {
    return await acceptStart(deps, request, planned, ctx);
  } finally {
    deps.engine.launchGate.leave();
  }
}

/**
 * The YAML a start runs and its parsed form.
 * @throws as {@link specOf}; `invalid_tool_input` (field `spec`, `details.errors`) when it is invalid.
 */
async function plannedDag(
  deps: RunDeps,
  request: RunStartRequest,
  ctx: HandlerContext,
): Promise<{ spec: string; dag: NormalizedDag }> {
  const spec = await specOf(deps, request, ctx);
  const parsed = await parseDagSpecOffThread(spec, request.dagName);
  if (!parsed.valid || parsed.dag === undefined) {
    const first = parsed.errors[0] ?? 'invalid DAG';
    throw new DaguError('invalid_tool_input', `The DAG spec is invalid: ${first}`, {
      field: 'spec',
      details: { errors: parsed.errors },
    });
  }
  return { spec, dag: parsed.dag };
}

/** The run this very job (same bus job id) recorded under the caller's run id, if any. */
async function redeliveredRun(
  deps: RunDeps,
  request: RunStartRequest,
  ctx: HandlerContext,
): Promise<RunRef | undefined> {
  const recorded = await withStorageErrors(() =>
    recordedRun(deps.pool, request.dagName, request.dagRunId ?? '', ctx.jobId),
  );
  return recorded?.mine === true ? recorded.ref : undefined;
}

/**
 * The run already recorded as `dagName`/`dagRunId`, with `mine` true when the bus job `jobId`
 * recorded it (a re-delivered job); `undefined` when there is none.
 */
async function recordedRun(
  db: Queryable,
  dagName: string,
  dagRunId: string,
  jobId: string,
): Promise<{ ref: RunRef; mine: boolean } | undefined> {
  const existing = await findRun(db, dagName, dagRunId);
  if (existing === undefined) return undefined;
  const ref = runRefOf({ dagName, dagRunId, attemptId: existing.attempt_id, status: existing.status });
  return { ref, mine: (await requestIdOf(db, existing.pk)) === jobId };
}

async function acceptStart(
  deps: RunDeps,
  request: RunStartRequest,
  { spec, dag }: { spec: string; dag: NormalizedDag },
  ctx: HandlerContext,
): Promise<RunRef> {
  const merged = mergeParams(dag.params, request.params);
  if (request.dagRunId === LATEST_RUN_ID) {
    // Reads resolve `latest` to the DAG's latest run, so no run may be recorded under it.
    throw new DaguError('invalid_tool_input', latestRefused, { field: 'dagRunId' });
  }
  const dagRunId = request.dagRunId ?? generateRunId();
  const attemptId = generateAttemptId();
  // A start on a nearly full disk waits queued, saying why, and the dispatcher starts it once there is
  // room (engine/disk-guard.ts). Then it is subject to its queue's limits, as an enqueue.
  const lowDisk = request.enqueue ? undefined : await lowDiskReason(deps.config.workDir, deps.config.minFreeBytes);
  const status = request.enqueue || lowDisk !== undefined ? RunStatus.queued : RunStatus.running;
  const labels = [...new Set([...dag.labels, ...(request.labels ?? [])])];
  // The caller's profile, else the DAG's, else its workspace's (Dagu spec 022b); recorded with the run.
  const profile = await withStorageErrors(() =>
    resolveRunProfile(deps.pool, request.dagName, workspaceOfLabels(dag.labels), request.profile),
  );
  const newRun: NewRun = {
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
    spec,
    normalized: dag,
    nodes: nodesOfDag(dag).all,
    requestId: ctx.jobId,
    ...(status === RunStatus.running ? { owner: deps.replica } : {}),
    startedBy: actorOf(ctx.principal),
    ...(profile !== null ? { profile } : {}),
  };
  const entry: MutationEntry = {
    action: request.enqueue ? 'run.enqueued' : 'run.started',
    target: formatUri.run(request.dagName, dagRunId),
    details: {
      attemptId,
      inline: request.inline,
      ...(request.queue !== undefined ? { queue: request.queue } : {}),
      ...(profile !== null ? { profile } : {}),
      ...(lowDisk !== undefined ? { queuedBecause: lowDisk } : {}),
    },
  };
  if (lowDisk !== undefined)
    deps.logger.warn({ dagName: request.dagName, dagRunId, reason: lowDisk }, 'run start queued');
  const reply = runRefOf({ dagName: request.dagName, dagRunId, attemptId, status });
  // A generated run id without `singleton` or an idempotency key has nothing to look up, lock or wait
  // for: the run, its record and its reply go in one statement. A caller's own id or
  // `singleton` needs the transaction; so does a key, whose unique index can make an insert wait on
  // another request's open transaction, which only the transaction's statement_timeout cuts at the deadline.
  const fresh =
    request.dagRunId === undefined && request.singleton !== true && ctx.idempotencyKey === undefined
      ? await insertAlone(deps, newRun, entry, reply, ctx)
      : await insertInTransaction(deps, request, newRun, entry, ctx);
  if ('existing' in fresh) return fresh.existing;
  // startRun creates root runs only (children come from composition/child-runner.ts).
  deps.publisher.noteRootRun?.(request.dagName, dagRunId);
  await deps.publisher.publish(runEventOf({ dagName: request.dagName, dagRunId, attemptId }, status));
  // The engine plans the attempt from the rows just written, without reading them back, and executes it once
  // the other starts in flight are answered (at most RUN_LAUNCH_HOLD_MS); the run is the engine's from here
  // on, so a stop or a shutdown meanwhile reaches it.
  if (status === RunStatus.running) deps.engine.launch(fresh.pk, fresh);
  else deps.engine.pokeQueue();
  return reply;
}

/**
 * The YAML a start runs: the caller's (an inline spec, or the scheduler's copy of a stored one), else the
 * stored DAG's, read within the request's deadline.
 * @throws DaguError `invalid_tool_input` (an inline start without a spec), `resource_not_found` (no such
 *   DAG, with dag-service's `details.didYouMean`), `resource_unavailable` (dag-service unreachable in time).
 */
async function specOf(deps: RunDeps, request: RunStartRequest, ctx: HandlerContext): Promise<string> {
  if (request.spec !== undefined) return request.spec;
  if (request.inline)
    throw new DaguError('invalid_tool_input', 'An inline start needs the spec to run.', { field: 'spec' });
  const left = ctx.deadline - Date.now();
  if (left <= 0) throw deadlinePassedError();
  // The read ends a little before the start's deadline, so that its failure reaches the caller as this
  // service's answer (naming dag-service) rather than as a start that never answered.
  return deps.storedSpecs.spec(request.dagName, Math.max(1, left - Math.min(SPEC_READ_MARGIN_MS, left / 4)));
}

/** How long before the start's deadline the read of a stored DAG gives up, ms (at most a quarter of what is left). */
const SPEC_READ_MARGIN_MS = 500;

/**
 * The start as one statement outside a transaction: run, attempt, steps, streams, mutation record and
 * reply (so the handler wrapper has nothing left to store). PostgreSQL writes nothing once the deadline
 * has passed by its clock — a statement alone leaves no moment between it and its commit to check.
 */
async function insertAlone(
  deps: RunDeps,
  run: NewRun,
  entry: MutationEntry,
  reply: RunRef,
  ctx: HandlerContext,
): Promise<InsertedRun> {
  if (Date.now() >= ctx.deadline) throw deadlinePassedError();
  const inserted = await withStorageErrors(async () => {
    try {
      return await insertRun(deps.pool, run, {
        deadline: ctx.deadline,
        record: (firstParam) => mutationRecordInsert(ctx, entry, reply, firstParam, 'r'),
      });
    } catch (error) {
      if (isIdempotencyViolation(error)) throw idempotencyInFlight();
      if (isUniqueViolation(error)) throw runIdUsed(run.dagName, run.dagRunId);
      throw error;
    }
  });
  if (inserted === undefined) throw deadlinePassedError();
  markReplyRecorded(ctx);
  return inserted;
}

/**
 * The start in a transaction that commits only before the deadline: a caller's own run id is looked up
 * first (a re-delivered job gets its run), and `singleton` locks the DAG name and checks for
 * an active run. Returns the rows written, or `{existing}`: the reply for the run as first recorded.
 */
async function insertInTransaction(
  deps: RunDeps,
  request: RunStartRequest,
  run: NewRun,
  entry: MutationEntry,
  ctx: HandlerContext,
): Promise<InsertedRun | { existing: RunRef }> {
  try {
    return await mutate(deps.pool, fenceOf(ctx), async (client, record) => {
      // A run id this call generated cannot be taken yet: look only for a caller's own id
      // (a re-delivered job gets the run it created; anyone else gets `conflict`).
      const recorded =
        request.dagRunId === undefined ? undefined : await recordedRun(client, run.dagName, run.dagRunId, ctx.jobId);
      if (recorded !== undefined) {
        if (recorded.mine) return { existing: recorded.ref };
        throw runIdUsed(run.dagName, run.dagRunId);
      }
      if (request.singleton === true) {
        await lockDagName(client, run.dagName);
        if (await hasActiveRun(client, run.dagName)) {
          throw new DaguError('conflict', `A run of DAG ${run.dagName} is already running or queued (singleton).`, {
            field: 'singleton',
          });
        }
      }
      const inserted = await insertRun(client, run);
      await record(entry);
      return inserted;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw runIdUsed(run.dagName, run.dagRunId);
    throw error;
  }
}

const latestRefused = `The run id "${LATEST_RUN_ID}" names the latest run of a DAG when reading; a new run cannot take it.`;

function runIdUsed(dagName: string, dagRunId: string): DaguError {
  return new DaguError('conflict', `The run id ${dagRunId} is already used by DAG ${dagName}.`, { field: 'dagRunId' });
}
