import type { RepeatPolicy } from '@dagu-mcp/dag-spec';
import { StepStatus, stepStatusLabel } from '@dagu-mcp/contracts';
import { checkCondition, checkConditions } from '../process/conditions';
import { backoffDelayMs, checkWorkingDir, setUpNode, sleepUnlessAborted, type NodeSetup } from './node-setup';
import type { NodeSpec, NodeState, RunContext } from '../core/run-types';
import { executeTry, type TryResult } from '../executors/step-try';

/**
 * Runs one node to its final state (dagu-model §3 step semantics):
 *
 * 1. `running`; the node's environment and references are fixed now;
 * 2. `preconditions` (Dagu spec 023): not met → `skipped`; an evaluation
 *    error → `failed`; checked once, before retries and repeats;
 * 3. tries: a failed try is retried while `retry_policy.limit` allows (and its
 *    exit code is in `retry_policy.exit_code` when that is set); between tries
 *    the node is `retrying` (9) for `interval_sec × backoff^n` (capped at
 *    `max_interval_sec`); each try has `timeout_sec`;
 * 4. `repeat_policy`: the tries run again while (`while`) / until (`until`)
 *    the condition holds — a `condition` (value match with `expected`, else a
 *    command check), else `exit_code` membership, else (plain `repeat: true`)
 *    unconditionally — at most `limit` executions, `interval_sec` apart; a
 *    failed execution ends a plain or condition repeat;
 * 5. the last execution decides: success → `succeeded` (or `partially_succeeded`
 *    when the executor says so: a foreach with some failed items, a child run
 *    that ended partially succeeded) and outputs published;
 *    stop → `aborted`; a run timeout → `failed` with the timeout error;
 *    failure → `failed`, with `allowedFailure` when `continue_on` (failure,
 *    exit_code or output) lets the run go on, or `succeeded` when it also says
 *    `mark_success`.
 */

/** Why the run's signal aborted: a stop, the DAG's `timeout_sec`, a shutdown, or a bound of the run (`RUN_DIR_MAX_BYTES`). */
export type RunAbortReason =
  | { kind: 'stop' }
  | { kind: 'timeout'; error: string }
  | { kind: 'shutdown'; error: string }
  | { kind: 'limit'; error: string };

function reasonOf(signal: AbortSignal): RunAbortReason | undefined {
  const reason: unknown = signal.reason;
  if (typeof reason === 'object' && reason !== null && 'kind' in reason) {
    const kind = reason.kind;
    const error = 'error' in reason && typeof reason.error === 'string' ? reason.error : '';
    if (kind === 'timeout' || kind === 'shutdown' || kind === 'limit') return { kind, error };
    if (kind === 'stop') return { kind };
  }
  return undefined;
}

/** Runs `node` to completion, updating and persisting `state` on every change. */
export async function runNode(ctx: RunContext, node: NodeSpec, state: NodeState, signal: AbortSignal): Promise<void> {
  state.status = StepStatus.running;
  state.startedAt = new Date();
  state.finishedAt = undefined;
  state.error = undefined;
  ctx.states.save(node, state);
  ctx.log(`step started: ${node.name}`);
  const setup = setUpNode(ctx, node);
  const dirError = checkWorkingDir(setup.cwd);
  if (dirError !== undefined) return finish(ctx, node, state, failure(dirError), signal);
  if (node.step.preconditions.length > 0) {
    const check = await checkConditions(node.step.preconditions, conditionContext(ctx, setup, signal));
    if (check.kind === 'error') return finish(ctx, node, state, failure(`precondition: ${check.error}`), signal);
    if (check.kind === 'not_met') {
      state.status = StepStatus.skipped;
      state.finishedAt = new Date();
      state.outputs = { skipReason: { condition: check.condition, expected: check.expected, actual: check.actual } };
      ctx.states.save(node, state);
      ctx.log(`step skipped: ${node.name} (precondition not met: ${check.condition})`);
      ctx.stepEnded?.({ step: node.name, status: stepStatusLabel(state.status), condition: check.condition });
      return;
    }
  }
  let result = await runWithRetries(ctx, node, state, setup, signal);
  const policy = node.step.repeatPolicy;
  for (
    let executions = 1;
    policy !== undefined && result.checkpoint === undefined && !result.aborted && !signal.aborted;
    executions++
  ) {
    if (policy.limit !== undefined && policy.limit > 0 && executions >= policy.limit) break;
    if (!(await shouldRepeat(policy, result, ctx, withPublished(node, setup, result), signal))) break;
    ctx.log(`step repeats: ${node.name} (execution ${executions + 1})`);
    if (
      !(await sleepUnlessAborted(
        backoffDelayMs(policy.intervalSec, executions - 1, policy.backoff, policy.maxIntervalSec),
        signal,
      ))
    )
      break;
    result = await runWithRetries(ctx, node, state, setup, signal);
  }
  finish(ctx, node, state, result, signal);
}

/** The setup as seen after an execution: its own published values are visible to the repeat condition. */
function withPublished(node: NodeSpec, setup: NodeSetup, result: TryResult): NodeSetup {
  const published = result.published;
  if (published === undefined) return setup;
  const outputVars = new Map(setup.scope.outputVars);
  const env = { ...setup.env };
  if (published.variable !== undefined) {
    outputVars.set(published.variable.name, published.variable.value);
    env[published.variable.name] = published.variable.value;
  }
  const steps = new Map(setup.scope.steps);
  const refs = { outputs: published.outputs ?? {}, fields: published.fields ?? {}, exitCode: result.exitCode };
  steps.set(node.name, refs);
  if (node.step.id !== undefined) steps.set(node.step.id, refs);
  return { ...setup, env, scope: { ...setup.scope, env, outputVars, steps } };
}

function failure(error: string): TryResult {
  return { ok: false, error, timedOut: false, aborted: false, outputMatched: false };
}

function conditionContext(ctx: RunContext, setup: NodeSetup, signal: AbortSignal) {
  return {
    scope: setup.scope,
    shell: setup.shell,
    cwd: setup.cwd,
    env: setup.env,
    positional: ctx.env.positional,
    signal,
    killGraceMs: ctx.config.killGraceMs,
    launcher: ctx.launcher,
  };
}

async function runWithRetries(
  ctx: RunContext,
  node: NodeSpec,
  state: NodeState,
  setup: NodeSetup,
  signal: AbortSignal,
): Promise<TryResult> {
  const timeoutMs =
    node.step.timeoutSec !== undefined && node.step.timeoutSec > 0 ? node.step.timeoutSec * 1000 : undefined;
  for (;;) {
    const result = await executeTry(ctx, {
      node,
      state,
      scope: setup.scope,
      env: setup.env,
      cwd: setup.cwd,
      signal,
      timeoutMs,
    });
    if (result.ok || result.aborted || signal.aborted) return result;
    const policy = node.step.retryPolicy;
    if (policy === undefined || state.retryCount >= policy.limit) return result;
    if (policy.exitCodes.length > 0 && (result.exitCode === undefined || !policy.exitCodes.includes(result.exitCode)))
      return result;
    const delay = backoffDelayMs(policy.intervalSec, state.retryCount, policy.backoff, policy.maxIntervalSec);
    state.status = StepStatus.retrying;
    state.error = result.error;
    ctx.states.save(node, state);
    ctx.log(
      `step failed: ${node.name} (${result.error ?? 'failed'}); retry ${state.retryCount + 1}/${policy.limit} in ${delay} ms`,
    );
    if (!(await sleepUnlessAborted(delay, signal))) return { ...result, aborted: true };
    state.retryCount++;
    state.status = StepStatus.running;
    state.error = undefined;
    ctx.states.save(node, state);
  }
}

async function shouldRepeat(
  policy: RepeatPolicy,
  result: TryResult,
  ctx: RunContext,
  setup: NodeSetup,
  signal: AbortSignal,
): Promise<boolean> {
  let holds: boolean;
  if (policy.condition !== undefined) {
    if (!result.ok) return false;
    const check = await checkCondition(
      { condition: policy.condition, expected: policy.expected },
      conditionContext(ctx, setup, signal),
    );
    if (check.kind === 'error') return false;
    holds = check.kind === 'met';
  } else if (policy.exitCodes.length > 0) {
    holds = result.exitCode !== undefined && policy.exitCodes.includes(result.exitCode);
  } else {
    // Plain `repeat: true` / `while`: again while it succeeds; plain `until`: until it succeeds.
    return policy.mode === 'while' ? result.ok : !result.ok && !result.aborted;
  }
  return policy.mode === 'while' ? holds : !holds;
}

function finish(ctx: RunContext, node: NodeSpec, state: NodeState, result: TryResult, signal: AbortSignal): void {
  const { step } = node;
  state.finishedAt = new Date();
  state.exitCode = result.exitCode;
  state.allowedFailure = false;
  const reason = signal.aborted ? reasonOf(signal) : undefined;
  if (result.ok && result.checkpoint !== undefined && !signal.aborted) {
    // A checkpoint (human.task, approval): the step waits; the run parks once nothing else runs.
    state.status = StepStatus.waiting;
    state.error = undefined;
    state.finishedAt = undefined;
    state.outputs = result.published ?? {};
    state.checkpoint = result.checkpoint;
    ctx.states.save(node, state);
    ctx.log(`step waiting: ${node.name} (${result.checkpoint.kind === 'human_task' ? 'human task' : 'approval'})`);
    return;
  }
  if (result.ok) {
    // A foreach or child run that partly failed (dagu-model §3 "Run outcome"): a success for its dependants.
    state.status = result.partial === true ? StepStatus.partiallySucceeded : StepStatus.succeeded;
    state.error = result.partial === true ? result.error : undefined;
    state.outputs = result.published ?? {};
    if (state.outputs.variable !== undefined)
      ctx.outputVars.set(state.outputs.variable.name, state.outputs.variable.value);
  } else if (result.aborted && (reason === undefined || reason.kind === 'stop')) {
    state.status = StepStatus.aborted;
    state.error = undefined;
  } else {
    state.status = StepStatus.failed;
    state.error =
      result.aborted && reason !== undefined && 'error' in reason ? reason.error : (result.error ?? 'failed');
    const allowed =
      !result.aborted &&
      (step.continueOn.failure ||
        (result.exitCode !== undefined && step.continueOn.exitCode.includes(result.exitCode)) ||
        result.outputMatched);
    if (allowed && step.continueOn.markSuccess) {
      state.status = StepStatus.succeeded;
      state.error = undefined;
    } else state.allowedFailure = allowed;
  }
  const refs = {
    outputs: state.outputs.outputs ?? {},
    fields: state.outputs.fields ?? {},
    exitCode: state.exitCode,
    ...(result.stdout !== undefined ? { stdout: result.stdout } : {}),
    ...(result.stderr !== undefined ? { stderr: result.stderr } : {}),
  };
  ctx.stepRefs.set(node.name, refs);
  if (step.id !== undefined) ctx.stepRefs.set(step.id, refs);
  ctx.states.save(node, state);
  const detail = state.error !== undefined ? ` (${state.error})` : '';
  ctx.log(`step finished: ${node.name} status=${stepStatusLabel(state.status)}${detail}`);
  ctx.stepEnded?.({
    step: node.name,
    status: stepStatusLabel(state.status),
    ...(state.startedAt !== undefined ? { durationMs: Date.now() - state.startedAt.getTime() } : {}),
    ...(state.exitCode !== undefined ? { exitCode: state.exitCode } : {}),
  });
}
