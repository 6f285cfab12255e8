import { loadProfileEnv, type SecretSource } from '../store/profile-env';
import { createScratchDir, removeScratchDir } from './scratch-dirs';
import { waitForFreeSpace, watchDirSize } from './disk-guard';
import { rm } from 'node:fs/promises';
import type { HandlerKind, NormalizedDag } from '@dagu-mcp/dag-spec';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import {
  RunStatus,
  type RunStatusCode,
  runStatusLabel,
  type StepEvent,
  StepStatus,
  stepStatusLabel,
} from '@dagu-mcp/contracts';
import type { RunConfig } from '../config/run-config';
import { LogSink, type LogSinkOptions } from '../store/log-sink';
import { NodeStateWriter } from '../store/node-state-writer';
import { checkConditions } from '../process/conditions';
import { runGraph } from './graph-runner';
import type { RunParam } from '../core/params';
import { prepareRunEnvironment, runWorkDir } from '../process/run-environment';
import type {
  AttemptIdentity,
  NodeSpec,
  NodeState,
  RunContext,
  RunEnvironment,
  StepExecutors,
} from '../core/run-types';
import { applyHandlerOutcome, initFailureStatus, rollupRunStatus, type RunInterruption } from '../core/status-rules';
import type { RunIsolation, StepLauncher } from '../core/step-launch';
import { runNode, type RunAbortReason } from './step-runner';
import type { RunMetrics } from '../events/run-metrics';

/**
 * One attempt of a run, start to end (dagu-model §3 `handler_on`,
 * `preconditions`, `timeout_sec`; Dagu spec 023 for DAG-level preconditions):
 *
 * 1. the environment is prepared (params, env, working directory); a failure
 *    here fails the run;
 * 2. DAG-level `preconditions`: not met → the run ends `aborted` without
 *    running `init` or any step (an evaluation error → `failed`);
 * 3. `handler_on.init` (first attempt and whole retries): if it does not
 *    succeed the run ends `aborted` (dagu-model §3 "Run outcome"; `failed`
 *    when the DAG timeout cut it short), no step runs, and the `abort` and
 *    `exit` handlers still run;
 * 4. the steps (`graph-runner.ts`), under the DAG's `timeout_sec` (on expiry
 *    running steps are killed and end `failed` with the timeout error, the
 *    run `failed`) and the stop signal (steps end `aborted`, the run `aborted`);
 * 5. the status rollup (`core/status-rules.ts`), then `success` (succeeded or partially
 *    succeeded), `failure` or `abort` handler, then `exit` — always last;
 *    a failing success/failure/exit handler fails a successful run.
 *    A run whose steps wait at a checkpoint (human.task, approval) parks
 *    (status 7): only the `wait` handler runs; a resume is a new attempt.
 */

/** What an attempt runs. */
export interface AttemptPlan {
  identity: AttemptIdentity;
  dag: NormalizedDag;
  /** The spec snapshot the DAG was parsed from. */
  spec: string;
  params: readonly RunParam[];
  paramsEvaluated: boolean;
  /** Steps in execution order. */
  steps: readonly NodeSpec[];
  handlers: ReadonlyMap<HandlerKind, NodeSpec>;
  /** State of every node by name (steps) — kept nodes already done. */
  states: Map<string, NodeState>;
  handlerStates: Map<HandlerKind, NodeState>;
  runInit: boolean;
  schedulerLog: { id: number; startLine: number };
  /**
   * Variables every step of the attempt sees like `output:` variables (env and
   * `${NAME}`): the rejection input of an approval rewound by `rewind_to`.
   */
  carriedVars?: ReadonlyMap<string, string>;
  /** The runtime profile the run started with (Dagu spec 022b): its variables are loaded at launch. */
  profile?: { workspace: string; name: string };
}

/** How the attempt ended. */
export interface AttemptOutcome {
  status: RunStatusCode;
  error?: string;
  /** The params as evaluated (stored for retries). */
  params: readonly RunParam[];
  /** False when the attempt ended before its params were evaluated (a retry evaluates them then). */
  paramsEvaluated: boolean;
}

/** What the attempt runner needs from its replica. */
export interface AttemptDeps {
  pool: Pool;
  config: RunConfig;
  logger: Logger;
  processEnv: Readonly<Record<string, string>>;
  /** Starts the DAG author's code as the step user. */
  launcher: StepLauncher;
  /** The executor of every step kind (checked complete when the engine was built). */
  executors: StepExecutors;
  /** Run and step metrics (`events/run-metrics.ts`); absent in tests that build an attempt by hand. */
  metrics?: RunMetrics;
  /** The key ring of secret profile values; absent in tests that build an attempt by hand (no profile). */
  secrets?: SecretSource;
  /** Publishes step events after each committed step-state write; absent: none. */
  stepEvents?: (events: readonly StepEvent[]) => void;
}

/** Signals from the engine: `stop` (run.stop, DAG-level) and `kill` (shutdown: handlers too). */
export interface AttemptControl {
  stop: AbortSignal;
  kill: AbortSignal;
}

/** The log sink settings of an attempt: batching, and the outage buffer. */
export function logSinkOptions(config: RunConfig, logger: Logger): LogSinkOptions {
  return {
    flushMs: config.logFlushMs,
    batchLines: config.logBatchLines,
    logger,
    outageMaxMs: config.dbOutageMaxMs,
    spillDir: config.spillDir,
    spillAfterBytes: config.logSpillAfterBytes,
    spillMaxBytes: config.logSpillMaxBytes,
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs the attempt; never rejects for anything a user's DAG does. */
export async function runAttempt(
  replicaDeps: AttemptDeps,
  plan: AttemptPlan,
  control: AttemptControl,
): Promise<AttemptOutcome> {
  const { identity, dag } = plan;
  // A uid of its own for this run: every process of the attempt starts through its launcher.
  let isolation: RunIsolation | undefined;
  let isolationError: string | undefined;
  try {
    isolation = replicaDeps.launcher.isolateRun?.();
  } catch (cause) {
    isolationError = describe(cause);
  }
  const deps = isolation === undefined ? replicaDeps : { ...replicaDeps, launcher: isolation.launcher };
  const profile = await profileOf(deps, plan);
  // Secret profile values never reach a step log or the scheduler log as they are (022b).
  const sink = new LogSink(deps.pool, { ...logSinkOptions(deps.config, deps.logger), masks: profile.secrets });
  const scheduler = sink.stream(plan.schedulerLog.id, plan.schedulerLog.startLine);
  const log = (message: string): void => void scheduler.append(`${new Date().toISOString()} ${message}`);
  const publishSteps = deps.stepEvents;
  const states = new NodeStateWriter(
    deps.pool,
    identity.runPk,
    identity.attemptNo,
    deps.logger,
    deps.config.dbOutageMaxMs,
    publishSteps === undefined
      ? undefined
      : (rows) => {
          const at = new Date().toISOString();
          publishSteps(
            rows.map(({ name: step, ...row }) => ({
              name: identity.dagName,
              dagRunId: identity.dagRunId,
              attemptNo: identity.attemptNo,
              step,
              statusLabel: stepStatusLabel(row.status),
              ...row,
              at,
            })),
          );
        },
    deps.config.stateWriteMs,
  );
  const main = new AbortController();
  const forward = (reason: RunAbortReason) => () => {
    if (!main.signal.aborted) main.abort(reason);
  };
  const onStop = forward({ kind: 'stop' });
  const onKill = forward({ kind: 'shutdown', error: 'run-service replica stopped' });
  control.stop.addEventListener('abort', onStop, { once: true });
  control.kill.addEventListener('abort', onKill, { once: true });
  if (control.stop.aborted) onStop();
  const timeoutMs = dag.timeoutSec !== undefined && dag.timeoutSec > 0 ? dag.timeoutSec * 1000 : undefined;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(
          forward({ kind: 'timeout', error: `run timed out after ${dag.timeoutSec ?? 0}s (timeout_sec)` }),
          timeoutMs,
        );
  log(
    `attempt ${identity.attemptNo} started: ${identity.dagName} ${identity.dagRunId} (attempt id ${identity.attemptId})`,
  );
  const startedAt = Date.now();
  deps.logger.info(runLogFields(identity), 'run started');
  deps.metrics?.runStarted(identity.dagName);
  let params = plan.params;
  let status: RunStatusCode = RunStatus.failed;
  let error: string | undefined;
  let scratchDir: string | undefined;
  const runDir = runWorkDir(deps.config.workDir, dag.name, identity.dagRunId);
  let stopWatch: (() => void) | undefined;
  let overDisk = false;
  try {
    // No run starts its steps on a nearly full disk; it waits, saying why.
    await waitForFreeSpace({
      dir: deps.config.workDir,
      minFreeBytes: deps.config.minFreeBytes,
      everyMs: 2000,
      signal: main.signal,
      say: log,
      logger: deps.logger.child(runLogFields(identity)),
    });
    let env: RunEnvironment;
    try {
      if (isolationError !== undefined) throw new Error(isolationError);
      env = await prepareRunEnvironment({
        dag,
        params: plan.params,
        paramsEvaluated: plan.paramsEvaluated,
        processEnv: deps.processEnv,
        shell: deps.config.defaultShell,
        workDirBase: deps.config.workDir,
        dagRunId: identity.dagRunId,
        launcher: deps.launcher,
        profileEnv: profile.env,
      });
      if (profile.error !== undefined) throw new Error(profile.error);
    } catch (cause) {
      error = `could not prepare the run: ${describe(cause)}`;
      log(error);
      return { status: RunStatus.failed, error, params, paramsEvaluated: plan.paramsEvaluated };
    }
    params = env.params;
    if (deps.config.runDirMaxBytes > 0)
      stopWatch = watchDirSize({
        dir: runDir,
        maxBytes: deps.config.runDirMaxBytes,
        everyMs: deps.config.runDirCheckMs,
        onOver: (bytes) => {
          overDisk = true;
          const error = `the run directory holds ${bytes} bytes, over RUN_DIR_MAX_BYTES (${deps.config.runDirMaxBytes})`;
          log(error);
          forward({ kind: 'limit', error })();
        },
      });
    scratchDir = createScratchDir();
    await deps.launcher.shareDir(scratchDir);
    const ctx = contextOf(deps, plan, env, sink, states, log, scratchDir);
    const outcome = await runMainPhase(ctx, plan, main.signal);
    error = outcome.error;
    status = outcome.status;
    const handlerFailed = await runFinalHandlers(ctx, plan, status, control.kill);
    status = applyHandlerOutcome(status, handlerFailed);
    if (handlerFailed && error === undefined && status === RunStatus.failed) error = 'a lifecycle handler failed';
    return error === undefined
      ? { status, params, paramsEvaluated: true }
      : { status, error, params, paramsEvaluated: true };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    control.stop.removeEventListener('abort', onStop);
    control.kill.removeEventListener('abort', onKill);
    log(
      `attempt ${identity.attemptNo} finished: status=${runStatusLabel(status)}${error !== undefined ? ` (${error})` : ''}`,
    );
    deps.logger.info(
      {
        ...runLogFields(identity),
        status: runStatusLabel(status),
        durationMs: Date.now() - startedAt,
        ...(error !== undefined ? { error } : {}),
      },
      status === RunStatus.waiting ? 'run waiting' : 'run ended',
    );
    deps.metrics?.runEnded(identity.dagName, status, (Date.now() - startedAt) / 1000);
    await states.flush();
    await sink.flush();
    stopWatch?.();
    if (scratchDir !== undefined) removeScratchDir(scratchDir);
    await isolation?.release(runDir);
    // A directory over its bound is not kept for retention: its disk goes back at once.
    if (overDisk) await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The variables and secret values of the run's profile (Dagu spec 022b), or
 * none; a profile that cannot be loaded gives its reason in `error` (the
 * attempt then fails before any step starts).
 */
async function profileOf(
  deps: AttemptDeps,
  plan: AttemptPlan,
): Promise<{ env: Record<string, string>; secrets: string[]; error?: string }> {
  if (plan.profile === undefined) return { env: {}, secrets: [] };
  try {
    if (deps.secrets === undefined) throw new Error('no key ring for profile secrets');
    return await loadProfileEnv(deps.pool, deps.secrets, plan.profile.workspace, plan.profile.name);
  } catch (cause) {
    return { env: {}, secrets: [], error: `profile ${plan.profile.name}: ${describe(cause)}` };
  }
}

/** The fields every structured run line carries: which DAG, which run, which attempt, who started it. */
function runLogFields(identity: AttemptPlan['identity']): Record<string, unknown> {
  return {
    dag: identity.dagName,
    dagRunId: identity.dagRunId,
    attempt: identity.attemptNo,
    ...(identity.startedBy !== undefined ? { startedBy: identity.startedBy } : {}),
  };
}

/**
 * The values a person gave at a decided checkpoint of `step`:
 * a human task's form values, an approval's `input` values. Like `output:`
 * variables they become `${NAME}` and environment variables of every later
 * step (layer 4 of `env-merge.ts`), besides `${steps.<id>.outputs.<NAME>}`.
 * A decision always ends an attempt, so they are known when one starts.
 */
function decidedValuesOf(step: NodeSpec['step'], state: NodeState): [string, string][] {
  if (state.status !== StepStatus.succeeded) return [];
  const values = Object.entries(state.outputs.outputs ?? {});
  if (step.action?.type === 'human.task') return values;
  const inputs = new Set(step.approval?.input ?? []);
  return values.filter(([name]) => inputs.has(name));
}

function contextOf(
  deps: AttemptDeps,
  plan: AttemptPlan,
  env: RunEnvironment,
  sink: LogSink,
  states: NodeStateWriter,
  log: (m: string) => void,
  scratchDir: string,
): RunContext {
  const outputVars = new Map<string, string>(plan.carriedVars ?? []);
  const stepRefs = new Map<
    string,
    { outputs: Record<string, string>; fields: Record<string, string>; exitCode?: number }
  >();
  for (const node of plan.steps) {
    const state = plan.states.get(node.name);
    if (
      state === undefined ||
      (state.status !== StepStatus.succeeded &&
        state.status !== StepStatus.partiallySucceeded &&
        state.status !== StepStatus.failed)
    )
      continue;
    if (state.outputs.variable !== undefined) outputVars.set(state.outputs.variable.name, state.outputs.variable.value);
    for (const [name, value] of decidedValuesOf(node.step, state)) outputVars.set(name, value);
    const refs = { outputs: state.outputs.outputs ?? {}, fields: state.outputs.fields ?? {}, exitCode: state.exitCode };
    stepRefs.set(node.name, refs);
    if (node.step.id !== undefined) stepRefs.set(node.step.id, refs);
  }
  const writers = new Map<number, ReturnType<LogSink['stream']>>();
  return {
    attempt: plan.identity,
    dag: plan.dag,
    spec: plan.spec,
    executors: deps.executors,
    runGraph,
    env,
    config: deps.config,
    sink,
    states,
    outputVars,
    stepRefs,
    log,
    stepEnded: (report) => {
      deps.logger.info({ ...runLogFields(plan.identity), ...report }, 'step finished');
      if (report.durationMs !== undefined)
        deps.metrics?.stepEnded(plan.identity.dagName, report.status, report.durationMs / 1000);
    },
    scratchDir,
    launcher: deps.launcher,
    streamWriter: (id) => {
      const writer = writers.get(id) ?? sink.stream(id, 0);
      writers.set(id, writer);
      return writer;
    },
  };
}

async function runMainPhase(
  ctx: RunContext,
  plan: AttemptPlan,
  signal: AbortSignal,
): Promise<{ status: RunStatusCode; error?: string }> {
  const { dag } = plan;
  if (dag.preconditions.length > 0) {
    const scope = {
      params: ctx.env.paramMap,
      env: ctx.env.base,
      outputVars: new Map<string, string>(),
      steps: new Map(),
      context: { runId: ctx.attempt.dagRunId, dagName: ctx.attempt.dagName, attemptId: ctx.attempt.attemptId },
    };
    const shell = [ctx.config.defaultShell];
    const check = await checkConditions(dag.preconditions, {
      scope,
      shell,
      cwd: ctx.env.workDir,
      env: ctx.env.base,
      positional: ctx.env.positional,
      signal,
      killGraceMs: ctx.config.killGraceMs,
      launcher: ctx.launcher,
    });
    if (check.kind !== 'met') {
      const error =
        check.kind === 'error' ? `precondition: ${check.error}` : `precondition not met: ${check.condition}`;
      ctx.log(`run not started: ${error}`);
      return { status: check.kind === 'error' ? RunStatus.failed : RunStatus.aborted, error };
    }
  }
  const init = plan.handlers.get('init');
  const initState = plan.handlerStates.get('init');
  if (plan.runInit && init !== undefined && initState !== undefined) {
    await runNode(ctx, init, initState, signal);
    if (initState.status !== StepStatus.succeeded) {
      const interruption = interruptionOf(signal);
      const error = interruption.error ?? `init handler ${init.name} did not succeed`;
      ctx.log(`run not started: ${error}`);
      return { status: initFailureStatus(interruption.kind), error };
    }
  }
  await runGraph(ctx, plan.steps, plan.states, signal);
  const interruption = interruptionOf(signal);
  const rollup = [...plan.states.values()].map((state) => ({
    status: state.status,
    allowedFailure: state.allowedFailure,
  }));
  const status = rollupRunStatus(rollup, interruption.kind);
  return interruption.error !== undefined ? { status, error: interruption.error } : { status };
}

function interruptionOf(signal: AbortSignal): { kind: RunInterruption; error?: string } {
  if (!signal.aborted) return { kind: 'none' };
  const reason: unknown = signal.reason;
  if (typeof reason === 'object' && reason !== null && 'kind' in reason && reason.kind === 'stop')
    return { kind: 'aborted', error: 'the run was stopped' };
  const error =
    typeof reason === 'object' && reason !== null && 'error' in reason && typeof reason.error === 'string'
      ? reason.error
      : 'the run was interrupted';
  return { kind: 'failed', error };
}

async function runFinalHandlers(
  ctx: RunContext,
  plan: AttemptPlan,
  status: RunStatusCode,
  kill: AbortSignal,
): Promise<boolean> {
  const kind: HandlerKind | undefined =
    status === RunStatus.succeeded || status === RunStatus.partiallySucceeded
      ? 'success'
      : status === RunStatus.failed
        ? 'failure'
        : status === RunStatus.aborted
          ? 'abort'
          : undefined;
  let failed = false;
  // A parked run (status 7) is not over: only the `wait` handler runs (its failure changes nothing).
  const order: ReadonlyArray<HandlerKind | undefined> = status === RunStatus.waiting ? ['wait'] : [kind, 'exit'];
  for (const handler of order) {
    // Killed (replica shutdown past its grace period): no handler starts any more.
    if (handler === undefined || kill.aborted) continue;
    const node = plan.handlers.get(handler);
    const state = plan.handlerStates.get(handler);
    if (node === undefined || state === undefined) continue;
    await runNode(ctx, node, state, kill);
    if (state.status !== StepStatus.succeeded && handler !== 'abort' && handler !== 'wait') failed = true;
  }
  return failed;
}
