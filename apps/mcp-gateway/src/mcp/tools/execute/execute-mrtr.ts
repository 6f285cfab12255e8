import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DaguError, type Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { applyAnswer, elicitationFor, openCheckpointOf, type AskNote, type OpenCheckpoint } from './execute-ask';
import type { RunDetail } from '@dagu-mcp/contracts';
import { sessionOwnerOf } from '../../transport/session-record';

/**
 * Multi-round-trip requests for checkpoints (mcp-revisions §2
 * "MRTR"): in the stateless revision the gateway cannot send the client a
 * request, so `dagu_execute … wait=true` answers a waiting run with
 * `resultType: "input_required"`, one elicitation under
 * {@link INPUT_KEY}, and a sealed `requestState`; the client repeats the
 * call with `inputResponses` and that state, and whichever replica gets it
 * applies the answer and goes on waiting. Nothing is remembered between
 * the rounds but the state the client echoes.
 */

/** The key of the one input request. */
export const INPUT_KEY = 'checkpoint';
/** Answers refused by the form are asked again, with the reason, this many times in all. */
const MAX_ROUNDS = 3;
/** The `purpose` the state is sealed for (AES-GCM with the gateway's key ring: authentic and opaque). */
const STATE_PURPOSE = 'mcp.mrtr.request-state';

/** Seals and opens `requestState` (the gateway's secret box, shared by every replica). */
export interface StateSeal {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
}

/** What the state carries from one round to the next. */
const StateSchema = z.strictObject({
  v: z.literal(1),
  principalId: z.string(),
  dagName: z.string(),
  dagRunId: z.string(),
  stepName: z.string(),
  /** Epoch ms at which the call's `waitTimeoutSeconds` runs out. */
  deadline: z.number(),
  timeoutSeconds: z.number(),
  round: z.number().int().min(0),
});
export type RequestState = z.infer<typeof StateSchema>;

/**
 * The input requests asking about `run`'s open checkpoint — one form
 * elicitation under {@link INPUT_KEY}, the form the session era's elicitation
 * asks (execute-ask.ts) — as MRTR's `input_required` result and the tasks
 * extension's `input_required` task carry them (mcp-revisions §2, §4); with
 * `refusal`, the message starts with why the last answer was refused.
 * `{unsupported}` when the form cannot be an elicitation (the sentence to
 * tell instead), `undefined` when the run has no open checkpoint of its own.
 */
export function checkpointInputRequests(
  run: RunDetail,
  dagName: string,
  refusal?: string,
):
  | { readonly stepName: string; readonly inputRequests: Record<string, Record<string, unknown>> }
  | { readonly stepName: string; readonly unsupported: string }
  | undefined {
  const checkpoint = openCheckpointOf(run);
  if (checkpoint === undefined) return undefined;
  const built = elicitationFor(checkpoint, dagName);
  const { stepName } = checkpoint;
  if ('unsupported' in built) return { stepName, unsupported: built.unsupported };
  const message =
    refusal === undefined ? built.request.message : `Your answer was refused: ${refusal} ${built.request.message}`;
  return {
    stepName,
    inputRequests: { [INPUT_KEY]: { method: 'elicitation/create', params: { ...built.request, message } } },
  };
}

/**
 * The `input_required` result asking about `run`'s open checkpoint, or the
 * note to answer with when it cannot be asked (a form elicitation cannot
 * show) or was refused too often; `undefined` when the run has no open
 * checkpoint of its own.
 */
export function inputRequiredFor(
  seal: StateSeal,
  state: Omit<RequestState, 'v' | 'stepName' | 'round'>,
  run: RunDetail,
  round: number,
  refusal?: string,
): { result: CallToolResult } | { note: AskNote } | undefined {
  const asking = checkpointInputRequests(run, state.dagName, refusal);
  if (asking === undefined) return undefined;
  const { stepName } = asking;
  if ('unsupported' in asking)
    return { note: { stepName, outcome: 'unsupported', message: `${asking.unsupported} The run is still waiting.` } };
  if (round >= MAX_ROUNDS)
    return {
      note: {
        stepName,
        outcome: 'refused',
        message: `Your answer to step ${stepName} was refused ${MAX_ROUNDS} times (last: ${refusal ?? ''}); the run is still waiting.`,
      },
    };
  const sealed = seal.seal(JSON.stringify({ v: 1, ...state, stepName, round } satisfies RequestState), STATE_PURPOSE);
  const result = {
    content: [],
    resultType: 'input_required',
    inputRequests: asking.inputRequests,
    requestState: sealed,
  };
  return { result };
}

/**
 * Opens the state of a repeated call and checks it belongs to this caller
 * and DAG.
 *
 * @throws DaguError `invalid_tool_input` (field `requestState`) for a state
 *   that does not open, is another principal's or names another DAG
 */
export function openState(seal: StateSeal, sealed: string, principal: Principal, dagName: string): RequestState {
  let parsed: RequestState;
  try {
    parsed = StateSchema.parse(JSON.parse(seal.open(sealed, STATE_PURPOSE)));
  } catch {
    throw new DaguError('invalid_tool_input', 'requestState is not one this server issued.', { field: 'requestState' });
  }
  if (parsed.principalId !== sessionOwnerOf(principal) || parsed.dagName !== dagName)
    throw new DaguError('invalid_tool_input', 'requestState belongs to another call.', { field: 'requestState' });
  return parsed;
}

/**
 * Applies the client's response (MRTR `inputResponses`, or a task's `tasks/update`)
 * to the checkpoint named in the state:
 * `answered` when the checkpoint is completed, `refused` with run-service's
 * message for values the form refuses (ask again), or a note (declined,
 * cancelled, no response, or refused by a rule other than the form).
 */
export async function applyInputResponse(
  bus: BusClient,
  principal: Principal,
  state: Pick<RequestState, 'dagName' | 'dagRunId' | 'stepName'>,
  responses: Record<string, unknown> | undefined,
  waiting: RunDetail,
): Promise<{ answered: string } | { refused: string } | { note: AskNote }> {
  const { stepName } = state;
  const note = (outcome: AskNote['outcome'], message: string) => ({ note: { stepName, outcome, message } });
  const response = responses?.[INPUT_KEY];
  const answer = isRecord(response) ? response : {};
  if (answer.action === 'decline')
    return note('declined', `You declined to answer step ${stepName} in the client; the run is still waiting.`);
  if (answer.action !== 'accept')
    return note(
      'cancelled',
      `The question about step ${stepName} was cancelled in the client; the run is still waiting.`,
    );
  const checkpoint: OpenCheckpoint | undefined = openCheckpointOf(waiting);
  if (checkpoint?.stepName !== stepName)
    return note('refused', `Step ${stepName} no longer waits for an answer; nothing was applied.`);
  try {
    await applyAnswer(bus, principal, state, checkpoint, isRecord(answer.content) ? answer.content : {});
    return { answered: stepName };
  } catch (err) {
    if (err instanceof DaguError && err.code === 'invalid_tool_input') return { refused: err.message };
    if (err instanceof DaguError)
      return note('refused', `Your answer to step ${stepName} was refused (${err.message}); the run is still waiting.`);
    throw err;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
