import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { WAITING_RUN_STATUS, type Principal, type RunDetail, type RunRef } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { performRunControl, requireRunControlRole } from '../../../actions/run-control.actions';
import { getRun } from '../../../actions/run-reads.actions';
import type { McpCallContext } from '../../mcp-types';
import type { RunEventSource, RunWatch } from '../../run-events';
import { asServiceError, toolError } from '../tool-result';
import {
  DEFAULT_WAIT_TIMEOUT_SECONDS,
  parseExecuteInput,
  runControlOf,
  type ExecuteErrorContext,
  type ExecuteRequest,
} from './execute-input';
import { executeSuccess } from './execute-output';
import { askAboutCheckpoint, openCheckpointOf, type AskNote } from './execute-ask';
import { applyInputResponse, inputRequiredFor, openState, type StateSeal } from './execute-mrtr';
import { NO_PROGRESS_TOKEN_CAP_MS, PROGRESS_INTERVAL_MS, waitForRun, type Observed } from './execute-wait';
import { sessionOwnerOf } from '../../transport/session-record';
import { createdTaskResult, type TaskStore } from '../../task-store';

/** What `dagu_execute` is built from. Without `events` a wait re-reads the run on a timer only. */
export interface ExecuteToolDeps {
  readonly bus: BusClient;
  readonly events?: RunEventSource;
  /** Seals MRTR `requestState` (the gateway's secret box); without it modern clients get the waiting result. */
  readonly stateSeal?: StateSeal;
  /** Task records (tasks extension, mcp-revisions §4); without it no call answers with a task. */
  readonly tasks?: TaskStore;
}

/**
 * The `dagu_execute` tool (spec 036): parses the input (036 §Input), performs
 * exactly one run-control action (actions/run-control.actions.ts, which checks
 * the op's role, dagu-model §9) and, with `wait`, follows the run (036 §Wait,
 * dagu-model §10).
 *
 * - start/enqueue + dag: `run.start` by name; run-service reads the stored
 *   YAML (unknown DAG → `resource_not_found` with dag-service's
 *   `details.didYouMean`);
 * - start/enqueue + inline_spec: `run.start` with the given spec (`inline: true`);
 * - retry: `run.retry`; stop: `run.stop`.
 *
 * With `wait`, the run events of the DAG are watched BEFORE the action so no
 * status change is missed; a retry waits for the attempt the retry created.
 * Errors: an `isError` result `{code, message, action?, targetType?,
 * dagName?, dagRunId?, field?, details?}` (036 §Errors).
 */
export function createExecuteTool(deps: ExecuteToolDeps) {
  return async function daguExecute(args: unknown, ctx: McpCallContext): Promise<CallToolResult> {
    const callStarted = Date.now();
    const context: ExecuteErrorContext = {};
    let watch: RunWatch | undefined;
    try {
      const request = parseExecuteInput(args, context);
      const control = runControlOf(request);
      // Before any read or watch, and also for a resumed wait, which performs no action again.
      requireRunControlRole(ctx.principal, control);
      // The tasks extension (mcp-revisions §4): a client that declared it gets the run as a task to poll.
      if (
        ctx.tasks === true &&
        deps.tasks !== undefined &&
        request.action !== 'stop' &&
        ctx.inputRequired?.requestState === undefined
      )
        return await startAsTask(deps.bus, deps.tasks, request, control, ctx, context);
      if (!request.wait) {
        const ref = await performRunControl(deps.bus, ctx.principal, control);
        return executeSuccess(request, { dagName: request.name, dagRunId: ref.dagRunId }, undefined);
      }
      // A repeated call of a multi-round-trip request (2026-07-28): the run exists; nothing is started again.
      const mrtr = ctx.inputRequired !== undefined && deps.stateSeal !== undefined ? deps.stateSeal : undefined;
      const sealed = mrtr !== undefined ? ctx.inputRequired?.requestState : undefined;
      const state =
        mrtr !== undefined && sealed !== undefined ? openState(mrtr, sealed, ctx.principal, request.name) : undefined;
      watch = (deps.events ?? NO_EVENTS).watch(request.name, state?.dagRunId ?? request.dagRunId);
      const priorAttempt =
        state === undefined && request.action === 'retry'
          ? await currentAttempt(deps.bus, request, ctx.principal)
          : undefined;
      const ref: Pick<RunRef, 'dagRunId' | 'status' | 'statusLabel' | 'attemptId'> =
        state === undefined
          ? await performRunControl(deps.bus, ctx.principal, control)
          : { dagRunId: state.dagRunId, status: WAITING_RUN_STATUS, statusLabel: 'waiting' };
      context.dagRunId = ref.dagRunId;
      ctx.noteDagRun?.(ref.dagRunId);
      watch.track(ref.dagRunId);
      const timeoutSeconds = state?.timeoutSeconds ?? request.waitTimeoutSeconds ?? DEFAULT_WAIT_TIMEOUT_SECONDS;
      const deadline = state?.deadline ?? Date.now() + timeoutSeconds * 1000;
      const left = () => Math.max(0, (deadline - Date.now()) / 1000);
      // Without a progress token nothing keeps the client's request timeout at bay: the whole call,
      // asking about checkpoints included, ends within dagu-model §10's 50 s (a resumed MRTR round
      // is bounded by its own wait).
      const callDeadline =
        ctx.progressToken === undefined && state === undefined
          ? Math.min(deadline, callStarted + NO_PROGRESS_TOKEN_CAP_MS)
          : deadline;
      const leftInCall = () => Math.max(0, (callDeadline - Date.now()) / 1000);
      const attemptFilter =
        state === undefined && request.action === 'retry' ? newAttemptFilter(ref, priorAttempt) : () => true;
      let answered: string | undefined;
      const waitOnce = (initial: Observed, seconds: number) =>
        waitForRun({
          readRun: (timeoutMs) =>
            getRun(deps.bus, ctx.principal, { dagName: request.name, dagRunId: ref.dagRunId }, { timeoutMs }),
          watch: watch ?? NO_EVENTS.watch(request.name),
          initial,
          // After an answer, the run still shows 7 until run-service resumes it: not the checkpoint we wait for.
          isCurrentAttempt: (run) => attemptFilter(run) && !stillAnswered(run, answered),
          endAtWaiting: request.action !== 'stop',
          timeoutSeconds: seconds,
          signal: ctx.signal,
          progressToken: ctx.progressToken,
          notify: ctx.notify,
        });
      let outcome = await waitOnce({ status: ref.status, statusLabel: ref.statusLabel }, leftInCall());
      let note: AskNote | undefined;
      let refusal: string | undefined;
      let round = 0;
      if (state !== undefined && mrtr !== undefined && outcome.kind === 'waiting') {
        const applied = await applyInputResponse(
          deps.bus,
          ctx.principal,
          state,
          ctx.inputRequired?.inputResponses,
          outcome.observed.run,
        );
        if ('note' in applied) note = applied.note;
        else if ('refused' in applied) {
          refusal = applied.refused;
          round = state.round + 1;
        } else {
          answered = applied.answered;
          outcome = await waitOnce(outcome.observed, leftInCall());
        }
      }
      // A client that can be asked decides the checkpoint right here; the wait then goes on.
      while (outcome.kind === 'waiting' && note === undefined && !ctx.signal.aborted) {
        if (mrtr !== undefined) {
          if (left() <= 0) break;
          const base = {
            principalId: sessionOwnerOf(ctx.principal),
            dagName: request.name,
            dagRunId: ref.dagRunId,
            deadline,
            timeoutSeconds,
          };
          const asking = inputRequiredFor(mrtr, base, outcome.observed.run, round, refusal);
          if (asking === undefined) break;
          if ('note' in asking) {
            note = asking.note;
            break;
          }
          return asking.result;
        }
        if (ctx.elicit === undefined) break;
        const asked = await askAboutCheckpoint({
          bus: deps.bus,
          principal: ctx.principal,
          ...(ctx.currentPrincipal !== undefined ? { currentPrincipal: ctx.currentPrincipal } : {}),
          run: { dagName: request.name, dagRunId: ref.dagRunId },
          waiting: outcome.observed.run,
          elicit: ctx.elicit,
          deadline: callDeadline,
          progress: (message) => progressNote(ctx, message, deadline, timeoutSeconds),
          progressEveryMs: PROGRESS_INTERVAL_MS,
        });
        if (asked === undefined) break;
        if ('note' in asked) {
          note = asked.note;
          break;
        }
        answered = asked.answered;
        outcome = await waitOnce(outcome.observed, leftInCall());
      }
      return executeSuccess(request, { dagName: request.name, dagRunId: ref.dagRunId }, outcome, note);
    } catch (err) {
      return toolError(asServiceError(err), { ...context });
    } finally {
      watch?.close();
    }
  };
}

/**
 * Performs a start, enqueue or retry and answers with a task bound to the
 * run (`{resultType: "task", taskId, status: "working", createdAt,
 * lastUpdatedAt, ttlMs, pollIntervalMs}`, mcp-revisions §4), owned by the
 * caller; `wait` plays no part (the client polls `tasks/get`). A retry
 * remembers the attempt before it, whose reads the task does not judge.
 *
 * @throws DaguError as the action it performs (the call then answers an
 *   `isError` result, no task)
 */
async function startAsTask(
  bus: BusClient,
  tasks: TaskStore,
  request: ExecuteRequest,
  control: ReturnType<typeof runControlOf>,
  ctx: McpCallContext,
  context: ExecuteErrorContext,
): Promise<CallToolResult> {
  const priorAttemptId = request.action === 'retry' ? await currentAttempt(bus, request, ctx.principal) : undefined;
  const ref = await performRunControl(bus, ctx.principal, control);
  context.dagRunId = ref.dagRunId;
  ctx.noteDagRun?.(ref.dagRunId);
  const record = await tasks.create({
    ownerId: sessionOwnerOf(ctx.principal),
    toolName: 'dagu_execute',
    run: {
      dagName: request.name,
      dagRunId: ref.dagRunId,
      action: request.action === 'stop' ? 'start' : request.action,
      targetType: request.targetType,
      ...(priorAttemptId !== undefined ? { priorAttemptId } : {}),
    },
  });
  return { content: [], ...createdTaskResult(record) };
}

/** The run's attempt id before a retry; `undefined` when it cannot be read (run.retry then reports the error). */
async function currentAttempt(
  bus: BusClient,
  request: ExecuteRequest,
  principal: Principal,
): Promise<string | undefined> {
  try {
    const run = await getRun(bus, principal, { dagName: request.name, dagRunId: request.dagRunId ?? '' });
    return run.attemptId;
  } catch {
    return undefined;
  }
}

/**
 * Which reads belong to the retry's new attempt (dagu-model §10): any attempt
 * other than the one before the retry — the retry's own, or a later one when
 * a stopping run-service replica handed the run back (a new attempt id) —
 * else, when the prior attempt could not be read, the attempt the retry reply
 * names.
 */
export function newAttemptFilter(
  reply: { readonly dagRunId: string; readonly attemptId?: string | undefined },
  priorAttempt: string | undefined,
): (run: RunDetail) => boolean {
  if (priorAttempt !== undefined) return (run) => run.attemptId !== undefined && run.attemptId !== priorAttempt;
  if (reply.attemptId !== undefined) {
    const wanted = reply.attemptId;
    return (run) => run.attemptId === wanted;
  }
  return () => true;
}

/**
 * True while a run read still shows the checkpoint just answered: status 7
 * with the resume pending, or with that step still the open checkpoint.
 */
function stillAnswered(run: RunDetail, answered: string | undefined): boolean {
  if (answered === undefined || run.status !== WAITING_RUN_STATUS) return false;
  const record: Record<string, unknown> = { ...run };
  return record.humanTaskResumePending === true || openCheckpointOf(run)?.stepName === answered;
}

/** One progress notification while the person answers (the request has a token whenever `elicit` exists). */
function progressNote(ctx: McpCallContext, message: string, deadline: number, timeoutSeconds: number): void {
  if (ctx.progressToken === undefined) return;
  const waited = timeoutSeconds - Math.max(0, (deadline - Date.now()) / 1000);
  void ctx
    .notify({
      method: 'notifications/progress',
      params: { progressToken: ctx.progressToken, progress: waited, total: timeoutSeconds, message },
    })
    .catch(() => undefined);
}

/** No event source: the watch never fires, so the wait falls back to timed reads. */
const NO_EVENTS: RunEventSource = {
  watch: () => ({
    track: () => undefined,
    close: () => undefined,
    changed: (timeoutMs, signal) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve(false);
          },
          { once: true },
        );
      }),
  }),
};
