import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { McpError, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, type Principal } from '@dagu-mcp/contracts';
import { runWithRequestId } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpCallContext, McpDispatcher } from './dispatcher';
import { toMcpError } from './mcp-errors';
import { toolError } from './tool-error';
import { UnexpectedFailure, unexpectedCauseOf } from './unexpected-failure';
import { createCallContext, type Outbound } from './call-context';
import { withStructuredText } from './structured-text';
import { newRequestStreamTag, type EventLog } from './event-log';
import { PostStreamOutbound, standaloneOutbound } from './outbound';
import {
  errorResponse,
  INTERNAL_ERROR,
  JsonRpcError,
  REQUEST_CANCELLED,
  resultResponse,
  understandsPriming,
  type OutgoingMessage,
} from './protocol';
import type { ReplicaHub } from './replica-hub';
import type { SessionRecord } from './session-store';
import { SseStream } from './sse-stream';
import { writeJson } from './json-body';
import { requestIdOf } from '../../http/request-id';
import { outageErrorOf } from '../../http/dependency-outage';

/** What {@link RequestRunner} needs. */
export interface RequestRunnerDeps {
  readonly dispatcher: McpDispatcher;
  readonly events: EventLog;
  readonly hub: ReplicaHub;
  readonly logger: Logger;
  /** SSE keep-alive comment interval, ms. */
  readonly keepAliveMs: number;
  /** `retry` sent with priming events: the client's reconnection delay, ms. */
  readonly retryMs: number;
  /** How long a server→client request waits for its answer, ms. */
  readonly clientRequestTimeoutMs: number;
}

/** What the client accepts for a POST's answer. */
export interface Acceptable {
  readonly json: boolean;
  readonly sse: boolean;
}

/**
 * Runs one JSON-RPC request of a session and writes its HTTP answer
 * (Streamable HTTP §Sending Messages to the Server):
 *
 * - JSON (the fast path) unless the client accepts only SSE or the
 *   dispatcher wants a stream (progress, extension tools);
 * - SSE: comment, priming event (2025-11-25 clients), related messages with
 *   event ids, keep-alive comments, the response, end of stream.
 *
 * The request is registered on the replica hub while it runs, so
 * `notifications/cancelled` and session end abort its signal from any
 * replica. A cancelled request gets no response on a stream; a JSON answer
 * still owed becomes error -32800.
 *
 * It is also the error boundary of every MCP method (dagu-model §10): a
 * failure that is not a domain error (thrown, or marked by the tool or method
 * that caught it, unexpected-failure.ts) is logged here once, with its stack
 * and the HTTP request id, and the client gets only `internal_error` with
 * `details.requestId` (an `isError` result for `tools/call`, a JSON-RPC error
 * -32603 otherwise). Every `internal_error` and `resource_unavailable` answer
 * carries `details.requestId`, the id the logs carry.
 */
export class RequestRunner {
  constructor(private readonly deps: RequestRunnerDeps) {}

  async run(
    res: Response,
    session: SessionRecord,
    principal: Principal,
    request: JSONRPCRequest,
    accept: Acceptable,
  ): Promise<void> {
    const { dispatcher, hub } = this.deps;
    const canElicit = session.clientCapabilities.elicitation !== undefined;
    const stream =
      accept.sse && (!accept.json || (await dispatcher.wantsStream(request.method, request.params, { canElicit })));
    const tracked = hub.trackRequest(session.id, request.id);
    let outbound: Outbound = standaloneOutbound(this.deps.events, session.id);
    let post: PostStreamOutbound | undefined;
    if (stream) {
      const sse = new SseStream(res, { keepAliveMs: this.deps.keepAliveMs, headers: { 'Mcp-Session-Id': session.id } });
      sse.open();
      post = new PostStreamOutbound(this.deps.events, session.id, newRequestStreamTag(), sse, this.deps.logger);
      // Before the first event id reaches the client: a resumer must be able to tell who serves it (orphan-check.ts).
      await post
        .recordOwner({ replica: hub.replicaId, id: request.id, method: request.method, requestId: logIdOf(res) })
        .catch(() => undefined);
      if (understandsPriming(session.protocolVersion)) await post.prime(this.deps.retryMs).catch(() => undefined);
      outbound = post;
    }
    const response = await this.execute(session, principal, request, outbound, tracked, logIdOf(res));
    if (response === 'cancelled') {
      if (post !== undefined) return post.abandon();
      return writeJson(res, 200, errorResponse(request.id, REQUEST_CANCELLED, 'Request cancelled.'));
    }
    if (post !== undefined) return post.finish(response);
    res.setHeader('Mcp-Session-Id', session.id);
    writeJson(res, 200, response);
  }

  /**
   * Runs one request of a 2025-03-26 batch and resolves with its response
   * (related messages go to the standalone stream; a cancelled one gets -32800).
   *
   * @param logId - the HTTP request id of the batch (`X-Request-Id`), for logs and `details.requestId`.
   */
  async capture(
    session: SessionRecord,
    principal: Principal,
    request: JSONRPCRequest,
    logId?: string,
  ): Promise<OutgoingMessage> {
    const tracked = this.deps.hub.trackRequest(session.id, request.id);
    const response = await this.execute(
      session,
      principal,
      request,
      standaloneOutbound(this.deps.events, session.id),
      tracked,
      logId ?? randomUUID(),
    );
    return response === 'cancelled' ? errorResponse(request.id, REQUEST_CANCELLED, 'Request cancelled.') : response;
  }

  private async execute(
    session: SessionRecord,
    principal: Principal,
    request: JSONRPCRequest,
    outbound: Outbound,
    tracked: { signal: AbortSignal; release: () => void },
    logId: string,
  ): Promise<OutgoingMessage | 'cancelled'> {
    const progress = request.params?._meta?.progressToken;
    const ctx = createCallContext({
      session,
      principal,
      requestId: request.id,
      progressToken: typeof progress === 'string' || typeof progress === 'number' ? progress : undefined,
      signal: tracked.signal,
      outbound,
      awaits: this.deps.hub.awaits,
      clientRequestTimeoutMs: this.deps.clientRequestTimeoutMs,
    });
    let response: OutgoingMessage;
    try {
      response = await this.answer(session, request, ctx, logId);
    } finally {
      tracked.release();
    }
    return tracked.signal.aborted ? 'cancelled' : response;
  }

  /**
   * Runs one request through the dispatcher with a call context the caller
   * built and returns its answer: the result (an `isError` tool result
   * finished as {@link finishResult} says; for a 2025-03-26 client the
   * structured result's JSON also as text) or the error of {@link errorFor}.
   * Never throws. Both eras use it, so the error boundary is one.
   *
   * @param logId - the HTTP request id, for logs and `details.requestId`
   */
  async answer(
    session: SessionRecord,
    request: JSONRPCRequest,
    ctx: McpCallContext,
    logId: string,
  ): Promise<OutgoingMessage> {
    try {
      // Bus calls made for this request carry its id, so the services' log lines name it too.
      const result = await runWithRequestId(logId, () =>
        this.deps.dispatcher.handle(request.method, request.params, { ctx, session }),
      );
      const finished = this.finishResult(result, request, logId);
      return resultResponse(
        request.id,
        request.method === 'tools/call' && session.protocolVersion === '2025-03-26'
          ? withStructuredText(finished)
          : finished,
      );
    } catch (err) {
      return this.errorFor(err, request, logId);
    }
  }

  /**
   * A tool's `isError` result as the client gets it: an unexpected failure it
   * stands for is logged, and `internal_error` / `resource_unavailable` get
   * `details.requestId`.
   */
  private finishResult(
    result: Record<string, unknown>,
    request: JSONRPCRequest,
    logId: string,
  ): Record<string, unknown> {
    if (request.method !== 'tools/call' || result.isError !== true) return result;
    const unexpected = unexpectedCauseOf(result);
    // A Redis or PostgreSQL outage is no bug: resource_unavailable with details.dependency.
    const outage = unexpected === undefined ? undefined : outageErrorOf(unexpected.cause);
    if (outage !== undefined) return this.finishResult(toolError(outage.toServiceError()), request, logId);
    if (unexpected !== undefined) this.logUnexpected(unexpected.cause, request, logId);
    const structured = result.structuredContent;
    if (!isRecord(structured) || !carriesRequestId(structured.code)) return result;
    return { ...result, structuredContent: withRequestId(structured, logId) };
  }

  /**
   * The answer to a method that threw: a JSON-RPC error or MCP error keeps its
   * code (its error object gets `details.requestId` when due), a `DaguError`
   * becomes its 020 error object (an `isError` result for `tools/call`), so does a
   * Redis or PostgreSQL outage (`resource_unavailable`, `details.dependency`); anything else
   * is logged and becomes `internal_error`, an `isError` result for
   * `tools/call` (dagu-model §10: tool calls never use JSON-RPC errors for it).
   */
  private errorFor(err: unknown, request: JSONRPCRequest, logId: string): OutgoingMessage {
    if (err instanceof DaguError) {
      // A domain error no method turned into its answer: the 020 error object, as dagu-model §10 says.
      if (request.method === 'tools/call')
        return resultResponse(request.id, this.finishResult(toolError(err.toServiceError()), request, logId));
      return this.errorFor(toMcpError(err), request, logId);
    }
    if (err instanceof JsonRpcError || err instanceof McpError) {
      const data: unknown = err.data;
      const withId = isRecord(data) && carriesRequestId(data.code) ? withRequestId(data, logId) : data;
      return errorResponse(request.id, err.code, err.message, withId);
    }
    const failure = err instanceof UnexpectedFailure ? err.failure : err;
    const outage = outageErrorOf(failure);
    if (outage !== undefined) return this.errorFor(outage, request, logId);
    this.logUnexpected(failure, request, logId);
    const object = { code: 'internal_error' as const, message: 'Internal error.', details: { requestId: logId } };
    if (request.method === 'tools/call') return resultResponse(request.id, toolError(object));
    const extra = err instanceof UnexpectedFailure ? err.data : {};
    return errorResponse(request.id, INTERNAL_ERROR, object.message, {
      code: object.code,
      message: object.message,
      ...extra,
      details: object.details,
    });
  }

  /** The one log line of an unexpected failure: its stack (pino's `err`), the request id, the method and its target. */
  private logUnexpected(failure: unknown, request: JSONRPCRequest, logId: string): void {
    const params = request.params;
    const target = isRecord(params)
      ? typeof params.name === 'string'
        ? params.name
        : typeof params.uri === 'string'
          ? params.uri
          : undefined
      : undefined;
    const err = failure instanceof Error ? failure : new Error(String(failure));
    this.deps.logger.error(
      {
        err,
        requestId: logId,
        method: request.method,
        ...(target !== undefined ? { target: target.slice(0, 200) } : {}),
      },
      'mcp request failed',
    );
  }
}

/** The HTTP request id of `res` (request-id.ts), or a new one when the middleware did not run. */
function logIdOf(res: Response): string {
  return requestIdOf(res) ?? randomUUID();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** dagu-model §10: the codes whose error object names the request (`details.requestId`). */
function carriesRequestId(code: unknown): boolean {
  return code === 'internal_error' || code === 'resource_unavailable';
}

/** `object` with `details.requestId` set (other details kept). */
function withRequestId(object: Record<string, unknown>, requestId: string): Record<string, unknown> {
  const details = isRecord(object.details) ? object.details : {};
  return { ...object, details: { ...details, requestId } };
}
