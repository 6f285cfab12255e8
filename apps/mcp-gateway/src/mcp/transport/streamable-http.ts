import type { Request, Response } from 'express';
import { InitializeRequestParamsSchema, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { ANONYMOUS_PRINCIPAL, PrincipalSchema, type Principal } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpDispatcher } from './dispatcher';
import type { EventLog } from './event-log';
import { openGetStream } from './get-stream';
import {
  allowsBatch,
  classifyMessage,
  errorAnswer,
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  negotiateVersion,
  versionFromHeader,
  type ClassifiedMessage,
  type OutgoingMessage,
} from './protocol';
import type { ReplicaHub } from './replica-hub';
import { RequestRunner, type Acceptable } from './request-runner';
import { newSessionId, type SessionRecord, type SessionStore } from './session-store';
import { sessionOwnerOf } from './session-record';
import { SseStream } from './sse-stream';
import { writeJson } from './json-body';
import { ListenRegistry } from './listen-registry';
import { isModernVersion } from './modern-protocol';
import { isStatelessPost, StatelessHandler } from './stateless-handler';
import { requestIdOf } from '../../http/request-id';
import { sessionRef } from '../../http/request-log';

/** Settings of {@link StreamableHttpHandler} (see config.ts for the variables). */
export interface StreamableHttpOptions {
  readonly dispatcher: McpDispatcher;
  readonly sessions: SessionStore;
  readonly events: EventLog;
  readonly hub: ReplicaHub;
  readonly logger: Logger;
  readonly keepAliveMs: number;
  readonly retryMs: number;
  readonly clientRequestTimeoutMs: number;
  /** Fallback fetch interval of GET streams, ms. */
  readonly pollMs: number;
  /** Most messages in one 2025-03-26 batch (`MCP_BATCH_MAX_MESSAGES`); default {@link DEFAULT_BATCH_MAX_MESSAGES}. */
  readonly maxBatchMessages?: number;
  /**
   * Most bytes of a session's `clientInfo` and `capabilities` as JSON
   * (`MCP_SESSION_RECORD_MAX_BYTES`); default {@link DEFAULT_SESSION_RECORD_MAX_BYTES}.
   */
  readonly maxSessionRecordBytes?: number;
  /** The `subscriptions/listen` streams of this replica (stateless era); a new registry when absent. */
  readonly listeners?: ListenRegistry;
}

/** Default of {@link StreamableHttpOptions.maxBatchMessages}. */
export const DEFAULT_BATCH_MAX_MESSAGES = 100;
/** Default of {@link StreamableHttpOptions.maxSessionRecordBytes} (16 KiB). */
export const DEFAULT_SESSION_RECORD_MAX_BYTES = 16 * 1024;

/**
 * The MCP endpoint's Streamable HTTP handler (MCP 2025-03-26, 2025-06-18,
 * 2025-11-25 basic/transports), stateless per replica: every request loads
 * its session from Redis. Runs after authentication (`res.locals.principal`)
 * and after the body parser (`req.body`, POST only). Transport errors are
 * JSON-RPC error bodies with the request id when one was readable:
 *
 * | Condition | HTTP | JSON-RPC code |
 * | --- | --- | --- |
 * | POST accepts neither JSON nor SSE; GET does not accept SSE | 406 | -32000 |
 * | batch array under a revision without batches; empty batch; initialize in a batch | 400 | -32600 |
 * | batch of more than `maxBatchMessages` messages | 400 | -32600 |
 * | `initialize` whose `clientInfo` and `capabilities` pass `maxSessionRecordBytes` | 200 | -32602 |
 * | `initialize` by a principal at its bound of live sessions | 429 | -32000 |
 * | not a JSON-RPC 2.0 message | 400 | -32600 |
 * | `initialize` params invalid | 200 | -32602 |
 * | `initialize` on a live session | 400 | -32600 |
 * | `Mcp-Session-Id` missing (not initialize) | 400 | -32000 |
 * | session unknown, ended, expired or another principal's | 404 | -32001 |
 * | `MCP-Protocol-Version` malformed or unsupported | 400 | -32000 |
 * | notifications and responses only | 202, no body | — |
 */
export class StreamableHttpHandler {
  private readonly runner: RequestRunner;
  private readonly stateless: StatelessHandler;

  constructor(private readonly options: StreamableHttpOptions) {
    this.runner = new RequestRunner(options);
    this.stateless = new StatelessHandler({
      dispatcher: options.dispatcher,
      runner: this.runner,
      listeners: options.listeners ?? new ListenRegistry(),
      logger: options.logger,
      keepAliveMs: options.keepAliveMs,
    });
  }

  /**
   * Serves one POST, GET or DELETE of the MCP endpoint, whichever era it
   * speaks (mcp-revisions §2 "Dual era"): a POST whose `_meta` names a
   * protocol version, or one without a session whose `MCP-Protocol-Version`
   * is a stateless revision, takes the stateless path (stateless-handler.ts);
   * GET and DELETE of a stateless revision are 405; everything else is the
   * session path below.
   */
  async handle(req: Request, res: Response): Promise<void> {
    const modernHeader =
      req.header('mcp-session-id') === undefined && isModernVersion(req.header('mcp-protocol-version')?.trim());
    if (req.method !== 'POST' && modernHeader) {
      res.setHeader('Allow', 'POST');
      return send(res, 405, errorResponse(null, -32000, 'Method not allowed: 2026-07-28 takes POST only.'));
    }
    if (req.method === 'POST') return this.post(req, res, modernHeader);
    if (req.method === 'GET') return this.get(req, res);
    return this.delete(req, res);
  }

  /** Ends the stateless era's SSE streams held here (graceful shutdown). */
  closeStreams(): void {
    this.stateless.closeStreams();
  }

  private async post(req: Request, res: Response, modernHeader: boolean): Promise<void> {
    const accept: Acceptable = {
      json: req.accepts('application/json') !== false,
      sse: req.accepts('text/event-stream') !== false,
    };
    const body: unknown = req.body;
    if (!accept.json && !accept.sse)
      return send(
        res,
        406,
        errorAnswer(body, -32000, 'Not Acceptable: the client must accept application/json or text/event-stream.'),
      );
    if (isStatelessPost(body) || (modernHeader && !isInitialize(body)))
      return this.stateless.post(req, res, principalOf(res), accept);
    const batch = Array.isArray(body);
    const version = versionFromHeader(req.header('mcp-protocol-version'));
    if (batch && 'version' in version && !allowsBatch(version.version)) {
      return send(
        res,
        400,
        // Refused whole, as a revision without batches reads it: one answer (JSON-RPC 2.0 §6).
        errorResponse(
          null,
          INVALID_REQUEST,
          `Invalid Request: JSON-RPC batches are not supported in protocol version ${version.version}.`,
        ),
      );
    }
    const items: unknown[] = Array.isArray(body) ? body : [body];
    if (items.length === 0)
      return send(res, 400, errorResponse(null, INVALID_REQUEST, 'Invalid Request: empty batch.'));
    const maxBatch = this.options.maxBatchMessages ?? DEFAULT_BATCH_MAX_MESSAGES;
    if (items.length > maxBatch)
      return send(
        res,
        400,
        // Refused whole: one answer, not one per entry of a batch that may be this large.
        errorResponse(null, INVALID_REQUEST, `Invalid Request: a batch holds at most ${maxBatch} messages.`),
      );
    const messages = items.map(classifyMessage);
    const init = messages.find((m) => m.kind === 'request' && m.message.method === 'initialize');
    if (init !== undefined && init.kind === 'request') {
      if (batch)
        return send(
          res,
          400,
          errorResponse(init.message.id, INVALID_REQUEST, 'Invalid Request: initialize must not be part of a batch.'),
        );
      return this.initialize(req, res, init.message, accept);
    }
    const first = messages[0];
    if (!batch && first?.kind === 'invalid')
      return send(res, 400, errorResponse(first.id, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message.'));
    const session = await this.sessionOf(req, res, body);
    if (session === undefined) return;
    if ('error' in version) return send(res, 400, errorAnswer(body, -32000, version.error));
    const principal = principalOf(res);
    for (const message of messages) await this.receive(session, message);
    const requests = messages.filter((m) => m.kind === 'request');
    if (requests.length === 0 && !messages.some((m) => m.kind === 'invalid')) return void res.status(202).end();
    if (!batch && first?.kind === 'request') return this.runner.run(res, session, principal, first.message, accept);
    return this.answerBatch(res, session, principal, messages);
  }

  private async initialize(req: Request, res: Response, request: JSONRPCRequest, accept: Acceptable): Promise<void> {
    const principal = principalOf(res);
    const existing = req.header('mcp-session-id');
    if (existing !== undefined) {
      if (await this.options.sessions.isLive(existing, sessionOwnerOf(principal))) {
        return send(
          res,
          400,
          errorResponse(request.id, INVALID_REQUEST, 'Invalid Request: the session is already initialized.'),
        );
      }
      return send(res, 404, errorResponse(request.id, -32001, 'Session not found.'));
    }
    const params = InitializeRequestParamsSchema.safeParse(request.params);
    if (!params.success)
      return send(
        res,
        200,
        errorResponse(
          request.id,
          INVALID_PARAMS,
          'Invalid params: initialize needs protocolVersion, capabilities and clientInfo.',
        ),
      );
    // The record is loaded on every request of the session: its client-sent part is bounded.
    const maxRecord = this.options.maxSessionRecordBytes ?? DEFAULT_SESSION_RECORD_MAX_BYTES;
    const clientBytes = Buffer.byteLength(
      JSON.stringify({ clientInfo: params.data.clientInfo, capabilities: params.data.capabilities }),
    );
    if (clientBytes > maxRecord)
      return send(
        res,
        200,
        errorResponse(
          request.id,
          INVALID_PARAMS,
          `Invalid params: clientInfo and capabilities take ${clientBytes} bytes as JSON; at most ${maxRecord} are kept.`,
        ),
      );
    const negotiated = negotiateVersion(params.data.protocolVersion);
    const record: SessionRecord = {
      id: newSessionId(),
      protocolVersion: negotiated,
      principalId: sessionOwnerOf(principal),
      clientInfo: params.data.clientInfo,
      clientCapabilities: params.data.capabilities,
      logLevel: undefined,
      createdAt: Date.now(),
    };
    if (!(await this.options.sessions.create(record)))
      return send(
        res,
        429,
        errorResponse(
          request.id,
          -32000,
          'Too many sessions: this principal holds the most live MCP sessions allowed; end one (DELETE) or let one expire.',
        ),
      );
    this.options.logger.debug(
      { sessionRef: sessionRef(record.id), protocolVersion: record.protocolVersion },
      'mcp session opened',
    );
    const response: OutgoingMessage = {
      jsonrpc: '2.0',
      id: request.id,
      result: { ...this.options.dispatcher.initializeResult(negotiated, record.clientCapabilities) },
    };
    if (accept.json) {
      res.setHeader('Mcp-Session-Id', record.id);
      return send(res, 200, response);
    }
    const sse = new SseStream(res, { keepAliveMs: this.options.keepAliveMs, headers: { 'Mcp-Session-Id': record.id } });
    sse.open();
    sse.send(response);
    sse.end();
  }

  /** Applies one notification or response of the client (requests are answered by the caller). */
  private async receive(session: SessionRecord, message: ClassifiedMessage): Promise<void> {
    if (message.kind === 'response') {
      const { id } = message.message;
      if (id === undefined) return;
      const reply =
        'error' in message.message ? { id, error: message.message.error } : { id, result: message.message.result };
      return this.options.hub.deliverClientResponse(session.id, reply);
    }
    if (message.kind === 'notification' && message.message.method === 'notifications/cancelled') {
      const requestId = message.message.params?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number')
        await this.options.hub.cancelRequest(session.id, requestId);
    }
  }

  /** 2025-03-26 batches: every request answered, as one JSON array (invalid entries get -32600). */
  private async answerBatch(
    res: Response,
    session: SessionRecord,
    principal: Principal,
    messages: readonly ClassifiedMessage[],
  ): Promise<void> {
    const answers = await Promise.all(
      messages.map(async (m): Promise<OutgoingMessage | undefined> => {
        if (m.kind === 'invalid')
          return errorResponse(m.id, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message.');
        if (m.kind !== 'request') return undefined;
        return this.runner.capture(session, principal, m.message, requestIdOf(res));
      }),
    );
    res.setHeader('Mcp-Session-Id', session.id);
    send(
      res,
      200,
      answers.filter((a): a is OutgoingMessage => a !== undefined),
    );
  }

  private async get(req: Request, res: Response): Promise<void> {
    if (req.accepts('text/event-stream') === false)
      return send(res, 406, errorResponse(null, -32000, 'Not Acceptable: the client must accept text/event-stream.'));
    const session = await this.sessionOf(req, res, undefined);
    if (session === undefined) return;
    const version = versionFromHeader(req.header('mcp-protocol-version'));
    if ('error' in version) return send(res, 400, errorResponse(null, -32000, version.error));
    const opened = await openGetStream(this.options, res, session.id, req.header('last-event-id'));
    if (opened === 'unknown-stream')
      send(
        res,
        400,
        errorResponse(null, -32000, 'Bad Request: the stream named by Last-Event-ID is no longer available.'),
      );
  }

  private async delete(req: Request, res: Response): Promise<void> {
    const session = await this.sessionOf(req, res, undefined);
    if (session === undefined) return;
    const version = versionFromHeader(req.header('mcp-protocol-version'));
    if ('error' in version) return send(res, 400, errorResponse(null, -32000, version.error));
    await this.options.sessions.destroy(session.id);
    await this.options.hub.endSession(session.id);
    this.options.logger.debug({ sessionRef: sessionRef(session.id) }, 'mcp session ended');
    res.status(200).end();
  }

  /**
   * The request's session, or `undefined` after answering 400 (no header) or 404 (unknown, or
   * another principal's) to the request(s) of `body` (`undefined`: GET and DELETE, no body).
   */
  private async sessionOf(req: Request, res: Response, body: unknown): Promise<SessionRecord | undefined> {
    const header = req.header('mcp-session-id');
    if (header === undefined) {
      send(res, 400, errorAnswer(body, -32000, 'Bad Request: Mcp-Session-Id header is required.'));
      return undefined;
    }
    const session = await this.options.sessions.load(header, sessionOwnerOf(principalOf(res)));
    if (session === undefined) send(res, 404, errorAnswer(body, -32001, 'Session not found.'));
    return session;
  }
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'method' in body && body.method === 'initialize';
}

/** The principal the auth middleware left in `res.locals` (anonymous when authentication is off). */
function principalOf(res: Response): Principal {
  const parsed = PrincipalSchema.safeParse(res.locals.principal);
  return parsed.success ? parsed.data : ANONYMOUS_PRINCIPAL;
}

function send(res: Response, status: number, body: OutgoingMessage | OutgoingMessage[]): void {
  writeJson(res, status, body);
}
