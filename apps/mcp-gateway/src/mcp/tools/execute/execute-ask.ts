import { DaguError, type Principal, type RunDetail } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { completeHumanTask, decideApproval } from '../../../actions/checkpoint.actions';

/**
 * Asking the person in their MCP client to decide the checkpoint a waited-on
 * run reached: the elicitation request built from a waiting
 * step's human-task form or approval inputs, and the answer applied through
 * the same checkpoint actions as the REST checkpoint routes
 * (actions/checkpoint.actions.ts: `run.humanTask`, `run.approval`), so
 * validation, role rules and the recorded decider are the same.
 */

/** A waiting step's open checkpoint, as the run detail shows it (021 `humanTask` / `approval`). */
export interface OpenCheckpoint {
  readonly stepName: string;
  readonly kind: 'human_task' | 'approval';
  readonly prompt: string;
  /** A human task's form (JSON Schema of an object). */
  readonly form?: Record<string, unknown>;
  /** An approval's input names, and those required to approve. */
  readonly input?: readonly string[];
  readonly required?: readonly string[];
}

/** An elicitation request's params (legacy `elicitation/create`, or one MRTR input request). */
export interface ElicitationRequest {
  readonly mode: 'form';
  readonly message: string;
  readonly requestedSchema: {
    type: 'object';
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  };
}

/** The client's answer (legacy `ElicitResult`, or one MRTR input response). */
export interface ElicitationAnswer {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Record<string, unknown>;
}

/** The first waiting step of `run` with an open human task or approval, or `undefined`. */
export function openCheckpointOf(run: RunDetail): OpenCheckpoint | undefined {
  for (const step of run.steps) {
    const record: Record<string, unknown> = { ...step };
    const task = record.humanTask;
    if (isRecord(task)) {
      return {
        stepName: step.name,
        kind: 'human_task',
        prompt: typeof task.prompt === 'string' ? task.prompt : '',
        ...(isRecord(task.form) ? { form: task.form } : {}),
      };
    }
    const approval = record.approval;
    if (isRecord(approval)) {
      return {
        stepName: step.name,
        kind: 'approval',
        prompt: typeof approval.prompt === 'string' ? approval.prompt : `Approve step ${step.name}?`,
        input: strings(approval.input),
        required: strings(approval.required),
      };
    }
  }
  return undefined;
}

/** Property types an elicitation form can hold (MCP elicitation: flat primitives and enums only). */
const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/**
 * The elicitation request for a checkpoint, or the reason it cannot be one:
 * a human-task form with a nested object or array property (elicitation
 * forms are flat) — the caller then answers with the waiting result and
 * this message.
 *
 * - human task: the form's properties and `required` as they are (a task
 *   without a form asks for nothing: accepting completes it);
 * - approval: `decision` (`approve` / `reject`, required) and one string per
 *   input name (required ones are checked by run-service when approving).
 */
export function elicitationFor(
  checkpoint: OpenCheckpoint,
  dagName: string,
): { request: ElicitationRequest } | { unsupported: string } {
  const head = `Run of ${dagName}, step ${checkpoint.stepName}: ${checkpoint.prompt}`;
  if (checkpoint.kind === 'approval') {
    const properties: Record<string, Record<string, unknown>> = {
      decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject'] },
    };
    for (const name of checkpoint.input ?? []) {
      const needed = (checkpoint.required ?? []).includes(name) ? ' (required to approve)' : '';
      properties[name] = { type: 'string', title: name, description: `Input ${name}${needed}` };
    }
    return {
      request: { mode: 'form', message: head, requestedSchema: { type: 'object', properties, required: ['decision'] } },
    };
  }
  const form = checkpoint.form ?? {};
  const raw = isRecord(form.properties) ? form.properties : {};
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [name, schema] of Object.entries(raw)) {
    const type = isRecord(schema) ? schema.type : undefined;
    if (!isRecord(schema) || typeof type !== 'string' || !PRIMITIVE_TYPES.has(type))
      return {
        unsupported: `The form of step ${checkpoint.stepName} has a field (${name}) that an MCP client form cannot show (only strings, numbers, integers, booleans and enums); answer it with dagu_read's answer hint or over REST.`,
      };
    properties[name] = { ...schema };
  }
  const required = strings(form.required).filter((name) => name in properties);
  return {
    request: {
      mode: 'form',
      message: head,
      requestedSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
    },
  };
}

/**
 * Applies an accepted answer to the checkpoint, as the REST routes do
 * (`POST …/human-task` with `{values}`, `POST …/approval` with
 * `{decision, input}`), with the caller's principal.
 *
 * @throws DaguError from run-service: `invalid_tool_input` (values refused by
 *   the form, `details.errors`), `conflict` (no longer waiting on it),
 *   `unauthorized` (role), `resource_not_found`
 */
export async function applyAnswer(
  bus: BusClient,
  principal: Principal,
  run: { dagName: string; dagRunId: string },
  checkpoint: OpenCheckpoint,
  content: Record<string, unknown>,
): Promise<void> {
  const step = { dagName: run.dagName, dagRunId: run.dagRunId, stepName: checkpoint.stepName };
  if (checkpoint.kind === 'human_task') {
    await completeHumanTask(bus, principal, { ...step, values: content });
    return;
  }
  const { decision, ...rest } = content;
  if (decision !== 'approve' && decision !== 'reject')
    throw new DaguError('invalid_tool_input', 'decision must be "approve" or "reject".', { field: 'decision' });
  const input: Record<string, string> = {};
  for (const [name, value] of Object.entries(rest)) {
    if (value === undefined || value === '') continue;
    input[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  await decideApproval(bus, principal, { ...step, decision, ...(Object.keys(input).length > 0 ? { input } : {}) });
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How asking about a checkpoint ended when it did not complete it; told to the caller with the waiting result. */
export interface AskNote {
  readonly stepName: string;
  readonly outcome: 'declined' | 'cancelled' | 'refused' | 'unsupported' | 'timeout' | 'failed';
  readonly message: string;
}

/** What {@link askAboutCheckpoint} needs. */
export interface AskInput {
  readonly bus: BusClient;
  readonly principal: Principal;
  /** The principal the answer is applied as, looked up when it comes (the call context's `currentPrincipal`); default `principal`. */
  readonly currentPrincipal?: () => Promise<Principal>;
  readonly run: { dagName: string; dagRunId: string };
  readonly waiting: RunDetail;
  /** Sends the elicitation and resolves with the client's answer (the call context's `elicit`). */
  readonly elicit: (params: Record<string, unknown>, timeoutMs: number) => Promise<Record<string, unknown>>;
  /** Epoch ms at which `waitTimeoutSeconds` runs out; the person's time counts against it. */
  readonly deadline: number;
  /** Sends one progress message (the caller's token); called every `progressEveryMs` while the person answers. */
  readonly progress: (message: string) => void;
  readonly progressEveryMs: number;
}

/** Answers refused by the form are asked again, with the reason, this many times in all. */
const MAX_ROUNDS = 3;

/**
 * Asks the person about the run's open checkpoint and applies the answer:
 * `{answered: stepName}` once the checkpoint is completed (the run resumes),
 * `{note}` when it was not (declined, cancelled, refused three times, a form
 * elicitation cannot show, no answer before the deadline, or the client
 * failed) — the run then stays waiting — and `undefined` when the run has no
 * open checkpoint of its own (it waits for a child run).
 */
export async function askAboutCheckpoint(
  input: AskInput,
): Promise<{ answered: string } | { note: AskNote } | undefined> {
  const checkpoint = openCheckpointOf(input.waiting);
  if (checkpoint === undefined) return undefined;
  const { stepName } = checkpoint;
  const note = (outcome: AskNote['outcome'], message: string) => ({ note: { stepName, outcome, message } });
  const built = elicitationFor(checkpoint, input.run.dagName);
  if ('unsupported' in built) return note('unsupported', `${built.unsupported} The run is still waiting.`);
  const timer = setInterval(
    () => input.progress(`Waiting for your answer to step ${stepName} in the client.`),
    input.progressEveryMs,
  );
  try {
    let refusal: string | undefined;
    let lastError = '';
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const left = input.deadline - Date.now();
      if (left <= 0) break;
      const message = refusal === undefined ? built.request.message : `${refusal} ${built.request.message}`;
      let answer: Record<string, unknown>;
      try {
        answer = await input.elicit({ ...built.request, message }, left);
      } catch (err) {
        if (isTimeout(err)) break;
        return note('failed', `Asking in the client failed (${messageOf(err)}); the run is still waiting.`);
      }
      if (answer.action === 'decline')
        return note('declined', `You declined to answer step ${stepName} in the client; the run is still waiting.`);
      if (answer.action !== 'accept')
        return note(
          'cancelled',
          `The question about step ${stepName} was cancelled in the client; the run is still waiting.`,
        );
      const content = isRecord(answer.content) ? answer.content : {};
      try {
        // The decider's role now, not at the call's start: the person may have taken minutes.
        const decider = input.currentPrincipal === undefined ? input.principal : await input.currentPrincipal();
        await applyAnswer(input.bus, decider, input.run, checkpoint, content);
        return { answered: stepName };
      } catch (err) {
        if (!(err instanceof DaguError) || err.code !== 'invalid_tool_input') {
          if (err instanceof DaguError)
            return note(
              'refused',
              `Your answer to step ${stepName} was refused (${err.message}); the run is still waiting.`,
            );
          throw err;
        }
        lastError = err.message;
        refusal = `Your answer was refused: ${err.message}`;
      }
    }
    if (refusal !== undefined && input.deadline > Date.now())
      return note(
        'refused',
        `Your answer to step ${stepName} was refused ${MAX_ROUNDS} times (last: ${lastError}); the run is still waiting.`,
      );
    return note('timeout', `No answer to step ${stepName} came before the wait ended; the run is still waiting.`);
  } finally {
    clearInterval(timer);
  }
}

/** The client request wait ran out (client-awaits.ts: -32001). */
function isTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === -32001;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
