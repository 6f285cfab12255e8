import {
  LoggingLevelSchema,
  type LoggingLevel,
  type RequestId,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import type { McpCallContext } from './dispatcher';
import type { ClientAwaits } from './client-awaits';
import { JsonRpcError, METHOD_NOT_FOUND, type OutgoingMessage } from './protocol';
import type { SessionRecord } from './session-store';

/**
 * Where the server→client messages related to one request go: its own SSE
 * stream when it is answered as one, else the session's standalone stream.
 */
export interface Outbound {
  /** Delivers one message (through Redis, so any replica's stream can carry it). */
  send(message: OutgoingMessage): Promise<void>;
  /** Ends the request's HTTP stream early while the request goes on (SEP-1699); absent for JSON answers. */
  release?: () => void;
  /** Records the DAG-run the request started (answered with it when the request is orphaned); absent for JSON answers. */
  noteDagRun?: (dagRunId: string) => void;
}

/** What {@link createCallContext} needs. */
export interface CallContextOptions {
  readonly session: SessionRecord;
  readonly principal: Principal;
  readonly requestId: RequestId;
  readonly progressToken: string | number | undefined;
  readonly signal: AbortSignal;
  readonly outbound: Outbound;
  readonly awaits: ClientAwaits;
  /** How long a server→client request waits for the client's answer, ms. */
  readonly clientRequestTimeoutMs: number;
}

/** RFC 5424 severities in the order of MCP `LoggingLevel` (server/utilities/logging). */
const LEVEL_RANK: Record<LoggingLevel, number> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7,
};

/** Client capability each server→client request needs (lifecycle §Capability Negotiation). */
const REQUIRED_CAPABILITY: Readonly<Record<string, 'sampling' | 'elicitation' | 'roots'>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

/**
 * The {@link McpCallContext} of one request: `notify` filters progress (needs
 * this request's token) and log messages (session log level) and sends the
 * rest through `outbound`; `sendRequest` checks the client's capability,
 * mints a replica-owned id, sends the request and awaits the client's answer
 * (client-awaits.ts) — aborted with the request.
 */
export function createCallContext(options: CallContextOptions): McpCallContext {
  const { session, outbound, awaits, signal } = options;
  const notify = async (notification: ServerNotification): Promise<void> => {
    if (!shouldSend(notification, options.progressToken, session.logLevel)) return;
    await outbound.send({ jsonrpc: '2.0', ...notification });
  };
  const sendRequest = async (
    request: {
      method: string;
      params?: Record<string, unknown>;
    },
    timeoutMs = options.clientRequestTimeoutMs,
  ): Promise<Record<string, unknown>> => {
    const capability = REQUIRED_CAPABILITY[request.method];
    if (capability !== undefined && session.clientCapabilities[capability] === undefined) {
      throw new JsonRpcError(METHOD_NOT_FOUND, `The client did not declare the ${capability} capability.`);
    }
    const id = awaits.mint();
    const answer = awaits.wait(session.id, id, Math.max(1, timeoutMs), signal);
    try {
      await outbound.send(
        request.params === undefined
          ? { jsonrpc: '2.0', id, method: request.method }
          : { jsonrpc: '2.0', id, method: request.method, params: request.params },
      );
    } catch (err) {
      awaits.settle(session.id, {
        id,
        error: { code: -32603, message: 'The request could not be sent to the client.' },
      });
      await answer.catch(() => undefined);
      throw err;
    }
    return answer;
  };
  // A client that declared elicitation is asked with or without a progress token; without one the
  // tool keeps the whole call within dagu-model §10's 50 s (docs/decisions.md "Checkpoints asked without a progress token").
  const canElicit = session.clientCapabilities.elicitation !== undefined;
  return {
    principal: options.principal,
    signal,
    sessionId: session.id,
    progressToken: options.progressToken,
    notify,
    sendRequest: (request) => sendRequest(request),
    ...(canElicit
      ? {
          elicit: (params: Record<string, unknown>, timeoutMs: number) =>
            sendRequest({ method: 'elicitation/create', params }, Math.min(timeoutMs, options.clientRequestTimeoutMs)),
        }
      : {}),
    ...(outbound.release !== undefined ? { releaseStream: outbound.release } : {}),
    ...(outbound.noteDagRun !== undefined ? { noteDagRun: outbound.noteDagRun } : {}),
  };
}

/** Progress needs this request's token; log messages must reach the session's level (all pass when none is set). */
export function shouldSend(
  notification: ServerNotification,
  progressToken: string | number | undefined,
  logLevel: LoggingLevel | undefined,
): boolean {
  if (notification.method === 'notifications/progress')
    return progressToken !== undefined && notification.params.progressToken === progressToken;
  if (notification.method === 'notifications/message' && logLevel !== undefined) {
    const level = LoggingLevelSchema.safeParse(notification.params.level);
    return level.success && LEVEL_RANK[level.data] >= LEVEL_RANK[logLevel];
  }
  return true;
}
