import type { InitializeResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import { INVALID_PARAMS, JsonRpcError, type ProtocolVersion } from './protocol';
import type { ParamHeader } from './param-headers';
import type { SessionRecord } from './session-record';

/**
 * What the transport asks of the method layer above it, and what it hands
 * each method: the dispatcher's interface, one method call (its context and
 * session) and the params check every method shares. The transport builds
 * calls and runs a dispatcher; `mcp-dispatcher.ts` (the gateway's methods) and
 * `agents/agent-dispatcher.ts` (published agents' methods) implement it. Kept
 * here so that nothing in `transport/` imports the layers above it.
 */

/** What a tool or resource handler learns about the request it serves. */
export interface McpCallContext {
  readonly principal: Principal;
  /** Aborted when the client cancels the request or the session ends (on whichever replica it runs). */
  readonly signal: AbortSignal;
  readonly sessionId: string | undefined;
  /** The request's progress token, when the client sent one. */
  readonly progressToken: string | number | undefined;
  /**
   * Sends a notification related to this request: on the request's SSE
   * stream when it is answered as one, else on the session's GET stream.
   * `notifications/progress` needs the request's progress token;
   * `notifications/message` below the session's log level is dropped.
   */
  readonly notify: (notification: ServerNotification) => Promise<void>;
  /**
   * Sends a server→client request related to this request (e.g.
   * `sampling/createMessage`, `elicitation/create`) and resolves with the
   * client's result, whichever replica the client answers to.
   *
   * @throws JsonRpcError when the client lacks the capability (-32601),
   *   answers with an error, or does not answer in time (-32001)
   */
  readonly sendRequest?: (request: {
    method: string;
    params?: Record<string, unknown>;
  }) => Promise<Record<string, unknown>>;
  /**
   * Asks the person in the client with a form elicitation and resolves with
   * the answer (`{action: accept|decline|cancel, content?}`), waiting at most
   * `timeoutMs`. Present only when the client can be asked during this
   * request: in the session revisions, when it declared the
   * elicitation capability (without a progress token the caller bounds the
   * whole call by dagu-model §10's 50 s).
   *
   * @throws JsonRpcError -32001 when no answer came in time, or the client's error
   */
  readonly elicit?: (params: Record<string, unknown>, timeoutMs: number) => Promise<Record<string, unknown>>;
  /**
   * Stateless revision (2026-07-28) only, when the request's client
   * capabilities declare elicitation: the client answers `input_required`
   * results (MRTR). On a repeated call, what it sent back: `inputResponses`
   * and the `requestState` the server issued.
   */
  readonly inputRequired?: {
    readonly inputResponses?: Record<string, unknown>;
    readonly requestState?: string;
  };
  /**
   * Stateless revision (2026-07-28) only: true when the request's client capabilities declare
   * the tasks extension (`extensions["io.modelcontextprotocol/tasks"]`, mcp-revisions §4) and
   * the endpoint serves it; a tool may then answer `{resultType: "task", …}` instead of its result.
   */
  readonly tasks?: boolean;
  /**
   * The caller's principal as of now, for a checkpoint decision taken long
   * after the call began (asking the person): an
   * agent's tool looks its binding author's role up again, so a demotion
   * while the person answers is honoured. Absent: {@link principal} stands.
   *
   * @throws DaguError `unauthorized` when the caller holds no role any more
   */
  readonly currentPrincipal?: () => Promise<Principal>;
  /** Closes this request's SSE stream early (SEP-1699 polling); the client resumes it with `Last-Event-ID`. */
  readonly releaseStream?: () => void;
  /** Notes the DAG-run this request started, reported if the serving replica dies before answering. */
  readonly noteDagRun?: (dagRunId: string) => void;
}

/** What one method handler gets: the call context and the session it runs in. */
export interface MethodCall {
  readonly ctx: McpCallContext;
  readonly session: SessionRecord;
}

/** One entry of the dispatch table: validated params in, JSON-RPC `result` out; throws {@link JsonRpcError}. */
export type MethodHandler = (params: unknown, call: MethodCall) => Promise<Record<string, unknown>>;

/**
 * A JSON-RPC dispatcher: one table of method handlers shared by every request
 * of every session, so no per-request or per-session `Server` object exists.
 * Session state comes with each call (`MethodCall.session`).
 */
export interface McpDispatcher {
  /** The `initialize` result (the transport creates the session). */
  initializeResult(protocolVersion: ProtocolVersion, clientCapabilities?: Record<string, unknown>): InitializeResult;
  /**
   * Runs one request.
   * @throws JsonRpcError -32601 for an unknown method, -32602 for bad params,
   *   or the method's own error; anything else is an internal error (-32603).
   */
  handle(method: string, params: unknown, call: MethodCall): Promise<Record<string, unknown>>;
  /**
   * True when the request should be answered as an SSE stream even though
   * JSON would do: a `tools/call` with a progress token (progress must flow),
   * to an extension tool (it may log, ask the client, or release the stream),
   * or one that may ask the person (`client.canElicit`: the session's client
   * declared elicitation; the question travels on the request's stream).
   */
  wantsStream(method: string, params: unknown, client: { readonly canElicit: boolean }): Promise<boolean>;
  /**
   * The `x-mcp-header` parameters of tool `toolName` as offered to `principal` (SEP-2243),
   * checked against a stateless `tools/call`'s `Mcp-Param-*` headers; absent or empty: none
   * (also for a tool the principal's `tools/list` does not show).
   */
  paramHeaders?(toolName: string, principal: Principal): readonly ParamHeader[];
  /**
   * True when the dispatcher serves the tasks extension (`tasks/get`, `tasks/update`,
   * `tasks/cancel`; mcp-revisions §4): `server/discover` lists it and tool calls of clients
   * that declared it may answer with a task.
   */
  readonly servesTasks?: boolean;
}

/** Parses method params with an SDK schema; a mismatch is -32602 with `hint`. */
export function parseParams<T>(
  schema: { safeParse: (v: unknown) => { success: true; data: T } | { success: false } },
  params: unknown,
  hint: string,
): T {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) throw new JsonRpcError(INVALID_PARAMS, `Invalid params: ${hint}.`);
  return parsed.data;
}
