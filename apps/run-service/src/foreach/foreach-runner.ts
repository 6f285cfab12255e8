import { topologicalOrder } from '@dagu-mcp/dag-spec';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import { retryWhileUnavailable } from '../store/outage-retry';
import { RunStatus, StepStatus } from '@dagu-mcp/contracts';
import type { InterpolationScope } from '../core/interpolate';
import type { ForeachRunner, NodeSpec, NodeState, NodeStateSink, RunContext, SubDagOutcome } from '../core/run-types';
import { rollupRunStatus } from '../core/status-rules';
import { aggregateOf, capturedStepsOf, evaluateCollect, type ItemResult } from '../core/foreach-collect';
import { foreachVariable, resolveItems, type ForeachItem } from '../core/foreach-items';
import { insertItems, type ForeachAddress } from '../store/foreach.repository';
import { ForeachStateWriter } from '../store/foreach-state-writer';

/**
 * Foreach execution (dagu-model §1 buckets, §3 `foreach`): the body steps
 * run once per item as their own small graph, with `${foreach.<as>}`,
 * `${foreach.index}` and `${foreach.key}` bound to the item, at most
 * `max_concurrent` items at a time (default {@link DEFAULT_MAX_CONCURRENT}).
 * Every item and every body step has its own stored state and log streams
 * (foreach.repository.ts). A body step that is itself a foreach runs nested:
 * its items are stored under the same top-level step with `parent` =
 * `<item path>.<body step name>` (the body step's `foreachParent`) and paths
 * `<parent>.<index>`.
 *
 * An item succeeds when its body rolls up succeeded or partially succeeded
 * and its `collect` expressions resolve (foreach-collect.ts). The step
 * (dagu-model §3 "Run outcome"): every item succeeded → succeeded; some
 * failed and at least one succeeded → partially succeeded (a success for its
 * dependants, with the error `N of M foreach items failed` and the values of
 * the succeeded items collected); every item failed → failed; a stop aborts
 * running items and leaves the rest aborted. The step's stdout is the
 * aggregate JSON line; its outputs are the collected values (succeeded items).
 */

/** Items run at once when `max_concurrent` is not set. */
export const DEFAULT_MAX_CONCURRENT = 10;

/** {@link ForeachRunner} over PostgreSQL. */
export class PgForeachRunner implements ForeachRunner {
  /**
   * @param deps.outageMaxMs how long item and body-step writes are retried while PostgreSQL is
   *   unavailable (`RUN_DB_OUTAGE_MAX_MS`), in ms; default 10 min
   */
  constructor(private readonly deps: { pool: Pool; logger: Logger; outageMaxMs?: number }) {}

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
    io: { onStdout(line: string): void; onStderr(line: string): void },
  ): Promise<SubDagOutcome> {
    const spec = node.step.foreach;
    if (spec === undefined) return { ok: false, error: 'the step has no foreach', aborted: false };
    const resolved = resolveItems(spec, scope);
    if (!resolved.ok) {
      io.onStderr(resolved.error);
      return { ok: false, error: resolved.error, aborted: false };
    }
    const outer = ctx.foreachAt;
    const at: ForeachAddress = {
      runPk: ctx.attempt.runPk,
      attemptNo: ctx.attempt.attemptNo,
      stepName: outer?.stepName ?? node.name,
    };
    const parent = outer === undefined ? '' : `${outer.path}.${node.name}`;
    const pathOf = (item: ForeachItem): string => (parent === '' ? String(item.index) : `${parent}.${item.index}`);
    const body: NodeSpec[] = topologicalOrder({ steps: spec.steps }).map((step, seq) => ({
      seq,
      name: step.name,
      step,
    }));
    const streams = await this.throughOutage('foreach items', () =>
      insertItems(
        this.deps.pool,
        at,
        parent,
        resolved.items.map((item) => ({ path: pathOf(item), index: item.index, key: item.key })),
        body.map((b) => ({ seq: b.seq, name: b.name, ...(b.step.id !== undefined ? { id: b.step.id } : {}) })),
      ),
    );
    ctx.log(`foreach ${node.name}${parent === '' ? '' : ` (${parent})`}: ${resolved.items.length} items`);
    const writer = new ForeachStateWriter(
      { pool: this.deps.pool, logger: this.deps.logger, outageMaxMs: this.deps.outageMaxMs ?? 600_000 },
      at,
    );
    const outcomes = new Map<number, ItemResult>();
    const captureStreams = capturedStepsOf(spec.collect);
    const queue = [...resolved.items];
    const limit = Math.max(1, spec.maxConcurrent ?? DEFAULT_MAX_CONCURRENT);
    const worker = async (): Promise<void> => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        const path = pathOf(item);
        if (signal.aborted) {
          outcomes.set(item.index, { index: item.index, key: item.key, status: RunStatus.aborted });
          writer.saveItem(path, { status: StepStatus.aborted, finishedAt: new Date() });
          continue;
        }
        const job = {
          at,
          path,
          item,
          body,
          streams: streams.get(path) ?? [],
          foreachVar: foreachVariable(spec, item),
          writer,
          collect: spec.collect,
          captureStreams,
        };
        outcomes.set(item.index, await this.runItem(ctx, job, signal));
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, Math.max(1, resolved.items.length)) }, () => worker()));
    await writer.flush();
    const failed = [...outcomes.values()].filter((result) => result.status === RunStatus.failed).length;
    if (signal.aborted) return { ok: false, error: 'aborted', aborted: true };
    const aggregate = aggregateOf([...outcomes.values()], Object.keys(spec.collect ?? {}));
    io.onStdout(aggregate.line);
    const outputs = spec.collect === undefined ? {} : { outputs: aggregate.outputs };
    if (failed === 0) return { ok: true, aborted: false, ...outputs };
    const error = `${failed} of ${resolved.items.length} foreach items failed`;
    io.onStderr(error);
    // dagu-model §3 "Run outcome": some items failed, at least one succeeded → the step partially succeeded.
    if (failed < resolved.items.length) return { ok: true, partial: true, error, aborted: false, ...outputs };
    return { ok: false, error, aborted: false };
  }

  private async runItem(
    ctx: RunContext,
    job: {
      at: ForeachAddress;
      path: string;
      item: ForeachItem;
      body: readonly NodeSpec[];
      streams: ReadonlyArray<{ stdout: number; stderr: number }>;
      foreachVar: string;
      writer: ForeachStateWriter;
      collect: Readonly<Record<string, string>> | undefined;
      captureStreams: ReadonlySet<string>;
    },
    signal: AbortSignal,
  ): Promise<ItemResult> {
    const { at, path, writer } = job;
    const startedAt = new Date();
    writer.saveItem(path, { status: StepStatus.running, startedAt });
    const states = new Map<string, NodeState>();
    for (const node of job.body) {
      const streams = job.streams[node.seq];
      states.set(node.name, {
        status: StepStatus.notStarted,
        retryCount: 0,
        allowedFailure: false,
        outputs: {},
        stdoutLog: streams?.stdout ?? 0,
        stderrLog: streams?.stderr ?? 0,
      });
    }
    const sink: NodeStateSink = {
      save: (node, state) => {
        const snapshot = {
          status: state.status,
          outputs: state.outputs,
          ...(state.error !== undefined ? { error: state.error } : {}),
          ...(state.startedAt !== undefined ? { startedAt: state.startedAt } : {}),
          ...(state.finishedAt !== undefined ? { finishedAt: state.finishedAt } : {}),
          ...(state.exitCode !== undefined ? { exitCode: state.exitCode } : {}),
          ...(node.step.kind === 'foreach' ? { foreachParent: `${path}.${node.name}` } : {}),
        };
        writer.saveBodyStep(path, node.seq, snapshot);
      },
    };
    const outputVars = new Map(ctx.outputVars);
    outputVars.set('foreach', job.foreachVar);
    const itemCtx: RunContext = {
      ...ctx,
      dag: { ...ctx.dag, steps: job.body.map((n) => n.step), maxActiveSteps: 0 },
      states: sink,
      outputVars,
      stepRefs: new Map(ctx.stepRefs),
      foreachAt: { stepName: at.stepName, path },
      captureStreams: job.captureStreams,
      log: (message) => ctx.log(`[${at.stepName} item ${path}] ${message}`),
    };
    await ctx.runGraph(itemCtx, job.body, states, signal);
    const rolled = rollupRunStatus(
      [...states.values()].map((s) => ({ status: s.status, allowedFailure: s.allowedFailure })),
    );
    let status: number = signal.aborted
      ? RunStatus.aborted
      : rolled === RunStatus.succeeded || rolled === RunStatus.partiallySucceeded
        ? RunStatus.succeeded
        : RunStatus.failed;
    const failedStep = [...states.entries()].find(([, s]) => s.status === StepStatus.failed && !s.allowedFailure);
    let error =
      status === RunStatus.failed
        ? `step ${failedStep?.[0] ?? '?'} failed${failedStep?.[1].error !== undefined ? `: ${failedStep[1].error}` : ''}`
        : undefined;
    let collected: Record<string, string> | undefined;
    if (status === RunStatus.succeeded && job.collect !== undefined) {
      const scope = {
        params: ctx.env.paramMap,
        env: ctx.env.base,
        outputVars,
        steps: itemCtx.stepRefs,
        context: { runId: ctx.attempt.dagRunId, dagName: ctx.attempt.dagName, attemptId: ctx.attempt.attemptId },
      };
      const evaluated = evaluateCollect(job.collect, scope);
      if (evaluated.ok) collected = evaluated.values;
      else {
        status = RunStatus.failed;
        error = evaluated.error;
        itemCtx.log(`item failed: ${evaluated.error}`);
      }
    }
    const finished = {
      status,
      startedAt,
      finishedAt: new Date(),
      ...(error !== undefined ? { error } : {}),
      ...(collected !== undefined ? { collected } : {}),
    };
    writer.saveItem(path, finished);
    return {
      index: job.item.index,
      key: job.item.key,
      status,
      ...(error !== undefined ? { error } : {}),
      ...(collected !== undefined ? { collected } : {}),
    };
  }
}
