import type { StepAction } from '@dagu-mcp/dag-spec';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import { withTransaction } from '@dagu-mcp/runtime';
import { RunStatus, runStatusLabel } from '@dagu-mcp/contracts';
import { nodesOfDag } from '../core/dag-nodes';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import { formatParams, mergeParams } from '../core/params';
import type { NodeSpec, RunContext, SubDagOutcome, SubDagRunner } from '../core/run-types';
import { runEventOf, type RunEventPublisher } from '../events/run-event-publisher';
import { generateAttemptId, generateRunId } from '../core/run-id';
import { findRunByPk, insertRun, loadSteps } from '../store/run.repository';
import { forceEndRun } from '../store/run-ownership.repository';
import { ParentWaitTracker } from './parent-waiting';
import { findOpenChild, linkChildRun, rootOf } from '../store/run-links.repository';
import { resolveChildSpec, type StoredSpecReader } from './sub-dag-spec';
import { parentActor } from '../core/started-by';
import { retryWhileUnavailable } from '../store/outage-retry';

/**
 * Composition (dagu-model §3 `action: dag.run` / `dag.enqueue`, legacy
 * `call:`): a step starts a child run — a local sub-DAG of the run's YAML
 * stream, else a stored DAG — with the step's `params` (interpolated), and
 * waits for its end. The child is an ordinary run row (own id, steps, logs)
 * linked to its root run, parent run and parent step; it is executed by
 * this replica's engine like any run it owns (heartbeats, stop, shutdown).
 * `dag.enqueue` waits too: the child starts at once, outside the queues, so
 * a parent never deadlocks on its own queue slot.
 *
 * The step takes the child's outcome (dagu-model §3 "Run outcome"): it
 * succeeds when the child succeeded, ends `partially_succeeded` when the
 * child did (a success for the step's dependants); else it fails with
 * `sub-DAG run <name>/<id> ended <label>`. A child parked at a checkpoint
 * makes the parent step and the parent run `waiting` (7) until a decision
 * ends or resumes it (`parent-waiting.ts` for the run; the step goes on
 * waiting for the child meanwhile). Stopping the parent stops the child. The step's
 * stdout is one JSON line `{name, dagRunId, params, status, outputs}`
 * (outputs of every child step, merged), so `output:` captures it (Dagu's
 * sub-run output).
 *
 * Hand-back on shutdown (`engine/hand-back.ts`): when the parent is killed
 * by its replica's shutdown (not stopped) and will be handed back, a child
 * that does not execute on this replica — parked at a checkpoint (7, no
 * owner), or resumed on another replica — or that is handed back itself is
 * left alone, and the step of the parent's next attempt adopts it: it waits
 * for that child (same run id, same checkpoint) instead of starting a new
 * one. A child that executes here as part of the parent's step ends as
 * before ("run-service replica stopped") and the next attempt starts a new
 * child. If the parent is not handed back after all (a stop came first), the
 * children left alone are aborted (`settleLeft`).
 */

/** What the child runner needs from its replica. */
export interface ChildRunnerDeps {
  pool: Pool;
  logger: Logger;
  replica: string;
  publisher: RunEventPublisher;
  /** Executes a child run (status running, owned here) to its end or park. */
  execute(pk: number, parent: AbortSignal): Promise<void>;
  /** Reads a stored DAG from dag-service; absent = local sub-DAGs only. */
  readStored?: StoredSpecReader;
  /** How often a parked child is looked at, in ms. */
  pollMs?: number;
  /**
   * Whether child `childPk` may be left alone when parent `parentPk` is
   * killed by shutdown: the parent will be handed back, and the child does
   * not execute here or is handed back itself. Absent = never.
   */
  leavesOnShutdown?(parentPk: number, childPk: number): boolean;
  /** How long the runner's reads and writes are retried while PostgreSQL is unavailable (`RUN_DB_OUTAGE_MAX_MS`), in ms; default 10 min. */
  outageMaxMs?: number;
}

/** The run a parent step waits for. */
interface ChildRef {
  pk: number;
  dagName: string;
  dagRunId: string;
  params: string;
}

function isShutdown(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return typeof reason === 'object' && reason !== null && 'kind' in reason && reason.kind === 'shutdown';
}

/** `awaitEnd` left the child alone for the parent's next attempt. */
const LEFT = 'left';

type SubDagAction = Extract<StepAction, { type: 'dag.run' | 'dag.enqueue' }>;

function paramsText(action: SubDagAction, scope: InterpolationScope): string | undefined {
  if (action.params === undefined) return undefined;
  if (typeof action.params === 'string') return interpolate(action.params, scope, 'plain');
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(action.params)) values[name] = interpolate(value, scope, 'plain');
  return JSON.stringify(values);
}

/** {@link SubDagRunner} over the run tables and this replica's engine. */
export class ChildRunner implements SubDagRunner {
  private readonly parents: ParentWaitTracker;
  /** Per parent run executing here: children left alone at its shutdown kill, until it is handed back or ended. */
  private readonly left = new Map<number, Set<number>>();
  /**
   * Per child run a step here waits for: shows that step waiting or running
   * (dagu-model §3). The tracker calls it level by level, so a step whose
   * child is still executing here (it waits on a grandchild) follows too.
   */
  private readonly stepWaits = new Map<number, (waits: boolean) => void>();

  constructor(private readonly deps: ChildRunnerDeps) {
    this.parents = new ParentWaitTracker({
      db: deps.pool,
      publisher: deps.publisher,
      childWaits: (childPk, waits) => this.stepWaits.get(childPk)?.(waits),
    });
  }

  /**
   * `operation` through a PostgreSQL outage: a parent step
   * waiting for its child must not fail because one look at the child met a
   * restarting database. The child's creation is retried too: its run id is
   * generated before, so a retry after a commit whose answer was lost is a
   * unique violation (the step fails), never a second child.
   */
  private throughOutage<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(operation, {
      maxMs: this.deps.outageMaxMs ?? 600_000,
      logger: this.deps.logger,
      what,
    });
  }

  async run(
    ctx: RunContext,
    node: NodeSpec,
    scope: InterpolationScope,
    signal: AbortSignal,
    io: { onStdout(line: string): void; onStderr(line: string): void; onWaiting?: (waits: boolean) => void },
  ): Promise<SubDagOutcome> {
    const action = node.step.action;
    if (action === undefined || (action.type !== 'dag.run' && action.type !== 'dag.enqueue'))
      return this.fail(io, 'the step has no dag.run action');
    // A child an earlier attempt of this run left active (hand-back on shutdown): wait for it, start none.
    const adopted = await this.throughOutage('sub-DAG lookup', () =>
      findOpenChild(this.deps.pool, ctx.attempt.runPk, node.name),
    );
    let child: ChildRef;
    if (adopted !== undefined) {
      child = adopted;
      ctx.log(
        `sub-DAG run adopted: ${child.dagName} ${child.dagRunId} (step ${node.name}; started by an earlier attempt, still active)`,
      );
    } else {
      const started = await this.start(ctx, node, action, scope, signal, io);
      if ('error' in started) return started.error;
      child = started;
    }
    const { pk } = child;
    if (io.onWaiting !== undefined) this.stepWaits.set(pk, io.onWaiting);
    const parent = { pk: ctx.attempt.runPk, attemptNo: ctx.attempt.attemptNo };
    let status: number | typeof LEFT;
    try {
      status = await this.awaitEnd(parent.pk, pk, signal, (waits) => {
        io.onWaiting?.(waits);
        return this.parents.update(parent, pk, waits);
      });
    } finally {
      await this.parents.update(parent, pk, false).catch((error: unknown) => this.logWarn(error));
      this.stepWaits.delete(pk);
      io.onWaiting?.(false);
    }
    if (status === LEFT) {
      ctx.log(
        `sub-DAG run left for the next attempt: ${child.dagName} ${child.dagRunId} (run-service replica stopped; the run is handed back)`,
      );
      const error = `run-service replica stopped; sub-DAG run ${child.dagName}/${child.dagRunId} is left for the next attempt`;
      io.onStderr(error);
      return { ok: false, error, aborted: false };
    }
    ctx.log(`sub-DAG run ended: ${child.dagName} ${child.dagRunId} status=${runStatusLabel(status)}`);
    const outputs: Record<string, string> = {};
    const rows = await this.throughOutage('sub-DAG outputs', async () => {
      const ended = await findRunByPk(this.deps.pool, pk);
      return ended === undefined ? [] : loadSteps(this.deps.pool, pk, ended.attempt_no);
    });
    for (const row of rows) {
      if (row.handler !== null) continue;
      Object.assign(outputs, row.outputs.outputs ?? {}, row.outputs.fields ?? {});
      if (row.outputs.variable !== undefined) outputs[row.outputs.variable.name] = row.outputs.variable.value;
    }
    io.onStdout(
      JSON.stringify({
        name: child.dagName,
        dagRunId: child.dagRunId,
        params: child.params,
        status: runStatusLabel(status),
        outputs,
      }),
    );
    if (status === RunStatus.succeeded) return { ok: true, aborted: false };
    // dagu-model §3 "Run outcome": the step takes the child's partial success (the parent then ends partially succeeded).
    if (status === RunStatus.partiallySucceeded) return { ok: true, partial: true, aborted: false };
    const error = `sub-DAG run ${child.dagName}/${child.dagRunId} ended ${runStatusLabel(status)}`;
    io.onStderr(error);
    return { ok: false, error, aborted: status === RunStatus.aborted && signal.aborted };
  }

  /**
   * After parent run `parentPk` executed here: when it was not handed back
   * (it ended, e.g. a stop won the race with the shutdown), the children left
   * alone for its next attempt are aborted — there is none.
   */
  async settleLeft(parentPk: number, handedBack: boolean): Promise<void> {
    const left = this.left.get(parentPk);
    if (left === undefined) return;
    this.left.delete(parentPk);
    if (handedBack) return;
    for (const pk of left) {
      try {
        await this.abortChild(pk);
      } catch (error) {
        this.logWarn(error);
      }
    }
  }

  /** Starts a new child run for the step (running, owned here) and executes it to its end or park. */
  private async start(
    ctx: RunContext,
    node: NodeSpec,
    action: SubDagAction,
    scope: InterpolationScope,
    signal: AbortSignal,
    io: { onStderr(line: string): void; onWaiting?: (waits: boolean) => void },
  ): Promise<ChildRef | { error: SubDagOutcome }> {
    const name = interpolate(action.dag, scope, 'plain');
    const resolved = await resolveChildSpec(ctx.spec, name, this.deps.readStored).catch((error: unknown) => ({
      error: `could not read DAG ${name}: ${error instanceof Error ? error.message : String(error)}`,
    }));
    if ('error' in resolved) return { error: this.fail(io, resolved.error) };
    let merged;
    try {
      merged = mergeParams(resolved.dag.params, paramsText(action, scope));
    } catch (error) {
      return {
        error: this.fail(
          io,
          `invalid params for sub-DAG ${name}: ${error instanceof Error ? error.message : String(error)}`,
        ),
      };
    }
    const dagRunId = generateRunId();
    const attemptId = generateAttemptId();
    const { pk, root } = await this.throughOutage('sub-DAG start', () =>
      withTransaction(this.deps.pool, async (client) => {
        const root = await rootOf(client, ctx.attempt.runPk);
        const { pk } = await insertRun(client, {
          dagName: resolved.dag.name,
          dagRunId,
          attemptId,
          status: RunStatus.running,
          params: formatParams(merged),
          mergedParams: merged,
          labels: resolved.dag.labels,
          queue: resolved.dag.queue ?? 'default',
          maxActiveRuns: resolved.dag.maxActiveRuns,
          inline: resolved.source === 'local',
          spec: resolved.spec,
          normalized: resolved.dag,
          nodes: nodesOfDag(resolved.dag).all,
          requestId: `sub:${ctx.attempt.attemptId}:${node.name}:${dagRunId}`,
          owner: this.deps.replica,
          startedBy: parentActor(ctx.attempt),
        });
        await linkChildRun(client, { pk, rootPk: root.pk, parentPk: ctx.attempt.runPk, parentStep: node.name });
        return { pk, root };
      }),
    );
    ctx.log(`sub-DAG run started: ${resolved.dag.name} ${dagRunId} (step ${node.name}, ${resolved.source})`);
    await this.deps.publisher.publish({
      ...runEventOf({ dagName: resolved.dag.name, dagRunId, attemptId }, RunStatus.running),
      root: { name: root.dagName, dagRunId: root.dagRunId },
    });
    // Registered before the child executes: while it runs here, its waits reach the step through the tracker.
    if (io.onWaiting !== undefined) this.stepWaits.set(pk, io.onWaiting);
    try {
      await this.deps.execute(pk, signal);
    } catch (error) {
      this.stepWaits.delete(pk);
      throw error;
    }
    return { pk, dagName: resolved.dag.name, dagRunId, params: formatParams(merged) };
  }

  private async abortChild(pk: number): Promise<void> {
    const ended = await this.throughOutage('sub-DAG abort', () =>
      forceEndRun(this.deps.pool, pk, RunStatus.aborted, 'the parent run was stopped'),
    );
    if (ended !== undefined)
      await this.deps.publisher.publish(
        runEventOf(
          { dagName: ended.dag_name, dagRunId: ended.dag_run_id, attemptId: ended.attempt_id },
          RunStatus.aborted,
        ),
      );
  }

  /**
   * Waits while the child is parked (or resumed) until it ends; a stop of the
   * parent aborts it. `onWaiting` learns at each look whether the child waits.
   * A shutdown kill of the parent leaves the child alone when
   * `leavesOnShutdown` allows it: @returns {@link LEFT} then.
   */
  private async awaitEnd(
    parentPk: number,
    pk: number,
    signal: AbortSignal,
    onWaiting: (waits: boolean) => Promise<void>,
  ): Promise<number | typeof LEFT> {
    for (;;) {
      const child = await this.throughOutage('sub-DAG status', () => findRunByPk(this.deps.pool, pk));
      if (child === undefined) return RunStatus.failed;
      if (child.status !== RunStatus.waiting && child.status !== RunStatus.running && child.status !== RunStatus.queued)
        return child.status;
      await onWaiting(child.status === RunStatus.waiting && !signal.aborted).catch((error: unknown) =>
        this.logWarn(error),
      );
      if (signal.aborted) {
        if (isShutdown(signal) && this.deps.leavesOnShutdown?.(parentPk, pk) === true) {
          const left = this.left.get(parentPk) ?? new Set<number>();
          left.add(pk);
          this.left.set(parentPk, left);
          return LEFT;
        }
        await this.abortChild(pk);
        return RunStatus.aborted;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.deps.pollMs ?? 500);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private logWarn(error: unknown): void {
    this.deps.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'parent run status could not follow its child',
    );
  }

  private fail(io: { onStderr(line: string): void }, error: string): SubDagOutcome {
    io.onStderr(error);
    return { ok: false, error, aborted: false };
  }
}
