import type { Response } from 'express';
import { McpError, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpDispatcher } from '../mcp-dispatcher';
import { createCallContext, type Outbound } from './call-context';
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
 */
export class RequestRunner {
  constructor(private readonly deps: RequestRunnerDeps) {}

  async run(res: Response, session: SessionRecord, principal: Principal, request: JSONRPCRequest, accept: Acceptable): Promise<void> {
    const { dispatcher, hub } = this.deps;
    const stream = accept.sse && (!accept.json || (await dispatcher.wantsStream(request.method, request.params)));
    const tracked = hub.trackRequest(session.id, request.id);
    let outbound: Outbound = standaloneOutbound(this.deps.events, session.id);
    let post: PostStreamOutbound | undefined;
    if (stream) {
      const sse = new SseStream(res, { keepAliveMs: this.deps.keepAliveMs, headers: { 'Mcp-Session-Id': session.id } });
      sse.open();
      post = new PostStreamOutbound(this.deps.events, session.id, newRequestStreamTag(), sse, this.deps.logger);
      if (understandsPriming(session.protocolVersion)) await post.prime(this.deps.retryMs).catch(() => undefined);
      outbound = post;
    }
    const response = await this.execute(session, principal, request, outbound, tracked);
    if (response === 'cancelled') {
      if (post !== undefined) return post.abandon();
      return void res.status(200).json(errorResponse(request.id, REQUEST_CANCELLED, 'Request cancelled.'));
    }
    if (post !== undefined) return post.finish(response);
    res.setHeader('Mcp-Session-Id', session.id);
    res.status(200).json(response);
  }

  /**
   * Runs one request of a 2025-03-26 batch and resolves with its response
   * (related messages go to the standalone stream; a cancelled one gets -32800).
   */
  async capture(session: SessionRecord, principal: Principal, request: JSONRPCRequest): Promise<OutgoingMessage> {
    const tracked = this.deps.hub.trackRequest(session.id, request.id);
    const response = await this.execute(session, principal, request, standaloneOutbound(this.deps.events, session.id), tracked);
    return response === 'cancelled' ? errorResponse(request.id, REQUEST_CANCELLED, 'Request cancelled.') : response;
  }

  private async execute(
    session: SessionRecord,
    principal: Principal,
    request: JSONRPCRequest,
    outbound: Outbound,
    tracked: { signal: AbortSignal; release: () => void },
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
      response = resultResponse(request.id, await this.deps.dispatcher.handle(request.method, request.params, { ctx, session }));
    } catch (err) {
      response = this.errorFor(err, request);
    } finally {
      tracked.release();
    }
    return tracked.signal.aborted ? 'cancelled' : response;
  }

  /** JSON-RPC error of a failed request: the handler's own code, else -32603 with a message that reveals nothing. */
  private errorFor(err: unknown, request: JSONRPCRequest): OutgoingMessage {
    if (err instanceof JsonRpcError || err instanceof McpError) return errorResponse(request.id, err.code, err.message, err.data);
    this.deps.logger.error({ err, method: request.method }, 'mcp request failed');
    return errorResponse(request.id, INTERNAL_ERROR, 'Internal error.');
  }
}
