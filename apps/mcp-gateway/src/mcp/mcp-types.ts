import type {
  CallToolResult,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import type { AuditEvent } from '../audit/audit-log';

/**
 * The types every MCP handler shares: what a call knows about its request and
 * the gateway's handler set. They live apart from `mcp-server.ts` so that
 * handlers, the extension router and the transport can name them without
 * importing the server module (which imports them back).
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
   * request (issue 22 §2): in the session revisions, when it declared the
   * elicitation capability and the request carries a progress token (so the
   * caller can send progress while the person answers).
   *
   * @throws JsonRpcError -32001 when no answer came in time, or the client's error
   */
  readonly elicit?: (params: Record<string, unknown>, timeoutMs: number) => Promise<Record<string, unknown>>;
  /**
   * Stateless revision (2026-07-28) only, when the request's client
   * capabilities declare elicitation: the client answers `input_required`
   * results (MRTR). On a repeated call, what it sent back: `inputResponses`
   * and the `requestState` the server issued (issue 22 §2).
   */
  readonly inputRequired?: {
    readonly inputResponses?: Record<string, unknown>;
    readonly requestState?: string;
  };
  /**
   * The caller's principal as of now, for a checkpoint decision taken long
   * after the call began (issue 22 §2 asking the person; issue 24 item 4): an
   * agent's tool looks its binding author's role up again, so a demotion
   * while the person answers is honoured. Absent: {@link principal} stands.
   *
   * @throws DaguError `unauthorized` when the caller holds no role any more
   */
  readonly currentPrincipal?: () => Promise<Principal>;
  /** Closes this request's SSE stream early (SEP-1699 polling); the client resumes it with `Last-Event-ID`. */
  readonly releaseStream?: () => void;
  /** Notes the DAG-run this request started, reported if the serving replica dies before answering (issue 18 item 3). */
  readonly noteDagRun?: (dagRunId: string) => void;
}

/** A tool handler: raw `arguments` (anything, validated by the tool itself) → result. */
export type ToolHandler = (args: unknown, ctx: McpCallContext) => Promise<CallToolResult>;

/** The gateway's MCP behaviour, independent of transport and session handling. */
export interface McpHandlers {
  readonly tools: Readonly<Record<string, ToolHandler>>;
  readonly listResources: () => Resource[];
  readonly listResourceTemplates: () => ResourceTemplate[];
  /** Reads a `dagu://` resource; throws `DaguError` (mapped per dagu-model §10). */
  readonly readResource: (uri: string, ctx: McpCallContext) => Promise<ReadResourceResult>;
  /** Records audit events (dagu-model §8: `mcp.tool_call.*`, `mcp.resource.read.*`). */
  readonly audit: (event: AuditEvent) => void;
}
