import {
  DaguError,
  isTransientCode,
  TERMINAL_RUN_STATUSES,
  WAITING_RUN_STATUS,
  type Principal,
  type RunDetail,
  type RunEvent,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { stopRun } from '../actions/run-control.actions';
import { getRun } from '../actions/run-reads.actions';
import { executeSuccess } from './tools/execute/execute-output';
import { applyInputResponse, checkpointInputRequests } from './tools/execute/execute-mrtr';
import { openCheckpointOf } from './tools/execute/execute-ask';
import type { ExecuteRequest } from './tools/execute/execute-input';
import { INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError, METHOD_NOT_FOUND } from './transport/protocol';
import type { MethodCall, MethodHandler } from './transport/dispatcher';
import { isModernVersion } from './transport/modern-protocol';
import { sessionOwnerOf } from './transport/session-record';
import type { TaskCallRunner } from './task-calls';
import { runMessage, TASKS_EXTENSION, taskOf, type TaskFinal, type TaskRecord, type TaskStore } from './task-store';

/**
 * The tasks extension's methods, v2 (`io.modelcontextprotocol/tasks`,
 * mcp-revisions §4), for tasks bound to DAG-runs (`dagu_execute`
 * start/enqueue/retry of a client that declared the extension):
 *
 * - `tasks/get {taskId}` → the task with its status part, derived from the
 *   run: `working` ← queued/running (or waiting for a child run);
 *   `input_required` ← waiting at a human task or approval, with
 *   `inputRequests` (the form MRTR and the session era's elicitation ask);
 *   `completed` ← any terminal run status, `result` being the CallToolResult
 *   `dagu_execute wait=true` gives for the finished run (a failed run is a
 *   completed task); `failed` ← the run is not found any more (the call
 *   could not be carried out); `cancelled` ← `tasks/cancel`. A transient read
 *   failure answers `working` with the reason; any other read error (e.g. a
 *   role lost since) is the request's error, the task unchanged.
 * - `tasks/update {taskId, inputResponses}` → `{}`: applies
 *   `inputResponses.checkpoint` through the checkpoint actions (the REST
 *   checkpoint routes' bus operations and role checks); a refused answer
 *   shows in the next `input_required`'s message.
 * - `tasks/cancel {taskId}` → `{}`: stops the run (`run.stop`, the role check
 *   of `dagu_execute stop`); the task is then `cancelled`. Idempotent; a task
 *   already terminal stays as it is.
 *
 * Errors: a request whose client capabilities do not declare the extension →
 * -32021; on a session (legacy) request → -32601; a missing `taskId`, or an
 * unknown, expired or another principal's task → -32602 with the same
 * message (its existence is never revealed); a role refused → the 020 error
 * object of `unauthorized`.
 */
export interface TaskMethodsDeps {
  readonly bus: BusClient;
  readonly store: TaskStore;
  /** Run status changes (the gateway's run event hub): polls of a running task then read no database. */
  readonly events?: { listenAll(listener: (event: RunEvent) => void): () => void };
  /** Other task-capable tools' calls (task-calls.ts): their tasks are answered from the record alone. */
  readonly calls?: TaskCallRunner;
}

/** SEP-2575 MissingRequiredClientCapability. */
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
/** How long a run status learnt from an event answers polls without a read, ms (a safety net for lost events). */
const EVENT_FRESH_MS = 5_000;
/** Runs whose last event a replica remembers. */
const EVENT_CACHE_MAX = 10_000;

/** The method table entries `tasks/get`, `tasks/update`, `tasks/cancel`, and a stop for the event listener. */
export function createTaskMethods(deps: TaskMethodsDeps): {
  readonly methods: Readonly<Record<string, MethodHandler>>;
  readonly close: () => void;
} {
  const seen = new Map<
    string,
    { status: number; statusLabel: string; attemptId: string | undefined; at: number; eventAt: number }
  >();
  const stop = deps.events?.listenAll((event) => {
    seen.delete(event.dagRunId);
    seen.set(event.dagRunId, {
      status: event.status,
      statusLabel: event.statusLabel,
      attemptId: event.attemptId,
      at: Date.now(),
      eventAt: Date.parse(event.at) || Date.now(),
    });
    if (seen.size > EVENT_CACHE_MAX) {
      const oldest = seen.keys().next();
      if (oldest.done !== true) seen.delete(oldest.value);
    }
  });

  /** The task when this caller owns it; -32602 otherwise, whatever the reason. */
  const load = async (params: unknown, call: MethodCall): Promise<TaskRecord> => {
    requireDeclared(call);
    const taskId = isRecord(params) && typeof params.taskId === 'string' ? params.taskId : undefined;
    if (taskId === undefined) throw new JsonRpcError(INVALID_PARAMS, 'Invalid params: taskId (a string) is required.');
    const record = await deps.store.get(taskId, sessionOwnerOf(call.ctx.principal));
    if (record === undefined)
      throw new JsonRpcError(INVALID_PARAMS, `Invalid params: no task ${taskId.slice(0, 200)}.`);
    return record;
  };

  /** A known running/queued status from an event not older than {@link EVENT_FRESH_MS}, else `undefined`. */
  const activeFromEvents = (record: TaskRecord): { at: number; label: string } | undefined => {
    const bound = record.run;
    const last = bound === undefined ? undefined : seen.get(bound.dagRunId);
    if (bound === undefined || last === undefined || Date.now() - last.at > EVENT_FRESH_MS) return undefined;
    if (bound.priorAttemptId !== undefined && last.attemptId === bound.priorAttemptId) return undefined;
    if (TERMINAL_RUN_STATUSES.has(last.status) || last.status === WAITING_RUN_STATUS) return undefined;
    return { at: last.eventAt, label: last.statusLabel };
  };

  const detailed = async (record: TaskRecord, principal: Principal): Promise<Record<string, unknown>> => {
    if (record.final !== undefined) return finalAnswer(record, record.final);
    if (record.run === undefined) return callAnswer(record);
    const bound = record.run;
    const active = activeFromEvents(record);
    if (active !== undefined) return taskOf(record, 'working', active.at, runMessage(record, active.label));
    let run: RunDetail;
    try {
      run = await getRun(deps.bus, principal, { dagName: bound.dagName, dagRunId: bound.dagRunId });
    } catch (err) {
      if (err instanceof DaguError && isTransientCode(err.code))
        return taskOf(record, 'working', undefined, `The run cannot be read right now (${err.message}).`);
      // Only a run that is gone fails the task; anything else (a role lost since) is this request's error.
      if (!(err instanceof DaguError) || err.code !== 'resource_not_found') throw err;
      const message = err.message;
      const error = { code: INTERNAL_ERROR, message: `The run cannot be followed: ${message}` };
      return finalAnswer(record, await deps.store.finish(record, { status: 'failed', at: Date.now(), error }));
    }
    const changedAt = Date.parse(run.finishedAt ?? run.startedAt ?? '') || undefined;
    // A retry's task does not judge the attempt before the retry.
    if (bound.priorAttemptId !== undefined && run.attemptId === bound.priorAttemptId)
      return taskOf(record, 'working', undefined, runMessage(record, 'being retried'));
    if (TERMINAL_RUN_STATUSES.has(run.status)) {
      const request: Pick<ExecuteRequest, 'action' | 'targetType'> = {
        action: bound.action,
        targetType: bound.targetType,
      };
      const result = executeSuccess(request, bound, {
        kind: 'finished',
        observed: { status: run.status, statusLabel: run.statusLabel, run },
      });
      const final: TaskFinal = { status: 'completed', at: changedAt ?? Date.now(), result: { ...result } };
      return finalAnswer(record, await deps.store.finish(record, final));
    }
    if (run.status === WAITING_RUN_STATUS) {
      // What the last tasks/update said counts only while the run still waits at that step.
      const step = openCheckpointOf(run)?.stepName;
      const note = step !== undefined && record.noteStep === step ? record.statusMessage : undefined;
      const refusal = note?.startsWith(REFUSED) === true ? note.slice(REFUSED.length) : undefined;
      const asking = checkpointInputRequests(run, bound.dagName, refusal);
      if (asking !== undefined && 'inputRequests' in asking)
        return {
          ...taskOf(record, 'input_required', changedAt, refusal === undefined ? note : undefined),
          inputRequests: asking.inputRequests,
        };
      if (asking !== undefined)
        return taskOf(
          record,
          'working',
          changedAt,
          `${asking.unsupported} The run is waiting at step ${asking.stepName}.`,
        );
    }
    return taskOf(record, 'working', changedAt, runMessage(record, run.statusLabel));
  };

  /**
   * A call task's `tasks/update`: keeps the responses to its pending requests; once every
   * request has one, the tool is called again with them (task-calls.ts).
   */
  const updateCall = async (record: TaskRecord, given: Record<string, unknown>, principal: Principal) => {
    const pending = record.pending;
    if (pending === undefined) return;
    const responses = { ...pending.responses };
    for (const [key, value] of Object.entries(given)) if (key in pending.inputRequests) responses[key] = value;
    const complete = Object.keys(pending.inputRequests).every((key) => key in responses);
    if (!complete) {
      await deps.store.update(record, { pending: { ...pending, responses } });
      return;
    }
    const resumed = await deps.store.update(record, { pending: undefined });
    deps.calls?.resume(resumed, responses, pending.requestState, principal);
  };

  const methods: Record<string, MethodHandler> = {
    'tasks/get': async (params, call) => detailed(await load(params, call), call.ctx.principal),
    'tasks/update': async (params, call) => {
      const record = await load(params, call);
      const responses = isRecord(params) ? params.inputResponses : undefined;
      if (!isRecord(responses))
        throw new JsonRpcError(INVALID_PARAMS, 'Invalid params: inputResponses (a map of responses) is required.');
      if (record.final !== undefined) return {};
      const principal = call.ctx.principal;
      const bound = record.run;
      if (bound === undefined) {
        await updateCall(record, responses, principal);
        return {};
      }
      const run = await getRun(deps.bus, principal, { dagName: bound.dagName, dagRunId: bound.dagRunId });
      const asking = run.status === WAITING_RUN_STATUS ? checkpointInputRequests(run, bound.dagName) : undefined;
      if (asking === undefined || !('inputRequests' in asking)) return {};
      const applied = await applyInputResponse(
        deps.bus,
        principal,
        { dagName: bound.dagName, dagRunId: bound.dagRunId, stepName: asking.stepName },
        responses,
        run,
      );
      if ('answered' in applied) await deps.store.note(record, undefined);
      else if ('refused' in applied) await deps.store.note(record, `${REFUSED}${applied.refused}`, asking.stepName);
      else await deps.store.note(record, applied.note.message, asking.stepName);
      return {};
    },
    'tasks/cancel': async (params, call) => {
      const record = await load(params, call);
      if (record.final !== undefined) return {};
      const bound = record.run;
      if (bound === undefined) {
        await deps.store.finish(record, { status: 'cancelled', at: Date.now(), statusMessage: 'Cancelled.' });
        deps.calls?.abort(record.taskId);
        return {};
      }
      try {
        await stopRun(deps.bus, call.ctx.principal, { dagName: bound.dagName, dagRunId: bound.dagRunId });
      } catch (err) {
        // A run that already ended is not stopped: its task completes with the run's outcome.
        if (err instanceof DaguError && (err.code === 'invalid_tool_input' || err.code === 'conflict')) return {};
        throw err;
      }
      await deps.store.finish(record, {
        status: 'cancelled',
        at: Date.now(),
        statusMessage: 'Cancelled; the run was stopped.',
      });
      return {};
    },
  };
  return { methods, close: () => stop?.() };
}

/** The status message prefix of a refused answer (told again in the next question). */
const REFUSED = 'Your last answer was refused: ';

/** A call task's answer before it ends: `input_required` with the requests not answered yet, else `working`. */
function callAnswer(record: TaskRecord): Record<string, unknown> {
  const pending = record.pending;
  if (pending === undefined) return taskOf(record, 'working', undefined, runMessage(record, 'running'));
  const open = Object.fromEntries(Object.entries(pending.inputRequests).filter(([key]) => !(key in pending.responses)));
  return { ...taskOf(record, 'input_required'), inputRequests: open };
}

/** A terminal task's answer: completed with `result`, failed with `error`, or cancelled. */
function finalAnswer(record: TaskRecord, final: TaskFinal): Record<string, unknown> {
  const task = taskOf(record, final.status, final.at, final.statusMessage);
  if (final.status === 'completed') return { ...task, result: final.result ?? { content: [] } };
  if (final.status === 'failed') return { ...task, error: final.error ?? { code: INTERNAL_ERROR, message: 'Failed.' } };
  return task;
}

/** -32601 on a session request (v2 tasks are the stateless revision's), -32021 without the client's declaration. */
function requireDeclared(call: MethodCall): void {
  if (!isModernVersion(call.session.protocolVersion))
    throw new JsonRpcError(METHOD_NOT_FOUND, 'Method not found: tasks are served to 2026-07-28 requests.');
  const extensions = call.session.clientCapabilities.extensions;
  if (!isRecord(extensions) || !isRecord(extensions[TASKS_EXTENSION]))
    throw new JsonRpcError(
      MISSING_REQUIRED_CLIENT_CAPABILITY,
      `Missing required client capability: extensions["${TASKS_EXTENSION}"].`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
