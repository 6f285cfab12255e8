import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { JSONRPCRequest, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpCallContext, McpDispatcher } from './dispatcher';
import { shouldSend } from './call-context';
import type { ListenRegistry } from './listen-registry';
import {
  ALL_PROTOCOL_VERSIONS,
  decorateResult,
  envelopeOf,
  HEADER_MISMATCH,
  headerMismatch,
  isModernVersion,
  META,
  metaOf,
  metaVersionOf,
  subscriptionMeta,
  UNSUPPORTED_PROTOCOL_VERSION,
} from './modern-protocol';
import {
  classifyMessage,
  errorResponse,
  idOf,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  type OutgoingMessage,
} from './protocol';
import type { Acceptable, RequestRunner } from './request-runner';
import { sessionOwnerOf, type SessionRecord } from './session-record';
import { SseStream } from './sse-stream';
import { writeJson } from './json-body';
import { paramHeaderMismatch } from './param-headers';
import { requestIdOf } from '../../http/request-id';

/** What {@link StatelessHandler} needs. */
export interface StatelessHandlerDeps {
  readonly dispatcher: McpDispatcher;
  /** The legacy era's runner: its `answer` is the one error boundary of both eras. */
  readonly runner: RequestRunner;
  readonly listeners: ListenRegistry;
  readonly logger: Logger;
  /** SSE keep-alive comment interval, ms. */
  readonly keepAliveMs: number;
}

/** Methods of the stateless revision the gateway serves; any other is -32601 with HTTP 404. */
const MODERN_METHODS = new Set([
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
]);

/** The tasks extension's id (mcp-revisions §4). */
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The legacy "resource not found" code, which 2026-07-28 answers as -32602 (mcp-revisions §2 "Errors"). */
const LEGACY_RESOURCE_NOT_FOUND = -32002;

/**
 * The stateless path of the MCP endpoint: MCP revision 2026-07-28 (mcp-revisions §2).
 * A POST whose `params._meta` names a protocol version comes here; there is
 * no session, nothing is read from or written to Redis for the request
 * itself, so any replica answers any request. Endpoint-independent: it
 * serves whatever endpoint the {@link StreamableHttpHandler} it belongs to is
 * mounted on.
 *
 * | Condition | HTTP | JSON-RPC code |
 * | --- | --- | --- |
 * | a batch (array) | 400 | -32600 |
 * | not a JSON-RPC 2.0 message | 400 | -32600 |
 * | `_meta` missing, or without the protocol version or the client capabilities (SEP-2575) | 400 | -32602 |
 * | `MCP-Protocol-Version` naming another version than `_meta` | 400 | -32020 |
 * | `_meta` version not a stateless revision served | 400 | -32022, `data: {supported, requested}` |
 * | `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` disagree with the body (or are missing) | 400 | -32020 |
 * | a method the revision does not have here (`ping`, `logging/setLevel`, `resources/subscribe`, …) | 404 | -32601 |
 * | `inputResponses` not a map of objects, `requestState` not a string (SEP-2322) | 200 | -32602 |
 * | a client capability the request needs but `_meta` did not declare | 400 | -32021 (JSON answers) |
 * | resource not found | 200 | -32602 (the legacy revisions' -32002) |
 * | notifications, responses | 202 | — |
 *
 * Results carry `resultType`, `_meta["io.modelcontextprotocol/serverInfo"]`,
 * and on list and read methods `ttlMs` / `cacheScope`. A request is answered
 * as JSON, or as SSE when the client accepts only SSE, or once a related
 * message (progress, a log message at the request's `_meta` logLevel — none
 * without one) must go out before the answer; closing the SSE stream (or the
 * connection) aborts the request's signal — the revision's cancellation.
 */
export class StatelessHandler {
  /** Open SSE streams here, ended by {@link closeStreams} on shutdown. */
  private readonly open = new Set<SseStream>();

  constructor(private readonly deps: StatelessHandlerDeps) {}

  /** Serves one stateless POST (body already parsed). */
  async post(req: Request, res: Response, principal: Principal, accept: Acceptable): Promise<void> {
    const body: unknown = req.body;
    if (Array.isArray(body))
      return send(
        res,
        400,
        errorResponse(null, INVALID_REQUEST, 'Invalid Request: 2026-07-28 has no JSON-RPC batches.'),
      );
    const message = classifyMessage(body);
    if (message.kind === 'invalid')
      return send(res, 400, errorResponse(message.id, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message.'));
    // Cancellation is the client closing the request's stream; nothing else is addressed to the server here.
    if (message.kind !== 'request') return void res.status(202).end();
    const request = message.message;
    const invalidMeta = invalidEnvelope(metaOf(body));
    if (invalidMeta !== undefined)
      return send(res, 400, errorResponse(request.id, INVALID_PARAMS, `Invalid params: ${invalidMeta}`));
    const version = metaVersionOf(body) ?? '';
    // The header and the body naming different versions is a mismatch, whichever of them we serve.
    const headerVersion = req.header('mcp-protocol-version')?.trim();
    if (headerVersion !== undefined && headerVersion !== version)
      return send(
        res,
        400,
        errorResponse(
          request.id,
          HEADER_MISMATCH,
          `Header mismatch: MCP-Protocol-Version (${headerVersion}) must equal params._meta["${META.protocolVersion}"] (${version}).`,
        ),
      );
    if (!isModernVersion(version))
      return send(
        res,
        400,
        errorResponse(
          request.id,
          UNSUPPORTED_PROTOCOL_VERSION,
          `Unsupported protocol version: ${version || '(none)'}. Without a session this endpoint speaks ${MODERN_VERSIONS_TEXT}; the session revisions (${LEGACY_VERSIONS_TEXT}) start with initialize.`,
          { supported: ALL_PROTOCOL_VERSIONS, requested: version },
        ),
      );
    const mismatch =
      headerMismatch((name) => req.header(name), request.method, request.params, version) ??
      this.paramMismatch(req, principal, request.method, request.params);
    if (mismatch !== undefined) return send(res, 400, errorResponse(request.id, HEADER_MISMATCH, mismatch));
    if (!MODERN_METHODS.has(request.method))
      return send(res, 404, errorResponse(request.id, METHOD_NOT_FOUND, `Method not found: ${request.method}`));
    const invalidRetry = invalidRetryFields(request.params);
    if (invalidRetry !== undefined)
      return send(res, 200, errorResponse(request.id, INVALID_PARAMS, `Invalid params: ${invalidRetry}`));
    const envelope = envelopeOf(metaOf(body), version);
    const session: SessionRecord = {
      id: '',
      protocolVersion: version,
      principalId: sessionOwnerOf(principal),
      clientInfo: envelope.clientInfo,
      clientCapabilities: envelope.clientCapabilities,
      logLevel: envelope.logLevel,
      createdAt: Date.now(),
    };
    if (request.method === 'server/discover') return send(res, 200, this.discover(request));
    if (request.method === 'subscriptions/listen') return this.listen(res, request);
    return this.run(res, session, principal, request, accept);
  }

  /** Ends the SSE streams held here (graceful shutdown); their requests are cancelled. */
  closeStreams(): void {
    for (const sse of [...this.open]) sse.end();
  }

  /**
   * The `Mcp-Param-*` check of a `tools/call` (param-headers.ts); other methods have none, nor
   * does a tool the principal is not offered (its client has no schema to mirror from; the
   * call is answered `unauthorized` as before).
   */
  private paramMismatch(req: Request, principal: Principal, method: string, params: unknown): string | undefined {
    if (method !== 'tools/call' || typeof params !== 'object' || params === null) return undefined;
    const name = 'name' in params && typeof params.name === 'string' ? params.name : undefined;
    const declared = name === undefined ? undefined : this.deps.dispatcher.paramHeaders?.(name, principal);
    if (declared === undefined || declared.length === 0) return undefined;
    return paramHeaderMismatch(
      (header) => req.header(header),
      declared,
      'arguments' in params ? params.arguments : undefined,
    );
  }

  /** `server/discover`: what `initialize` used to say, cacheable per authentication context. */
  private discover(request: JSONRPCRequest): OutgoingMessage {
    const init = this.deps.dispatcher.initializeResult('2025-11-25');
    // The tasks extension is offered to stateless clients only (mcp-revisions §4 v2).
    const capabilities: Record<string, unknown> = this.deps.dispatcher.servesTasks
      ? {
          ...init.capabilities,
          extensions: {
            ...(isRecord(init.capabilities.extensions) ? init.capabilities.extensions : {}),
            [TASKS_EXTENSION]: {},
          },
        }
      : init.capabilities;
    return {
      jsonrpc: '2.0',
      id: request.id,
      result: decorateResult(
        'server/discover',
        {
          supportedVersions: [...ALL_PROTOCOL_VERSIONS],
          capabilities,
          ...(init.instructions !== undefined ? { instructions: init.instructions } : {}),
        },
        init.serverInfo,
      ),
    };
  }

  private async run(
    res: Response,
    session: SessionRecord,
    principal: Principal,
    request: JSONRPCRequest,
    accept: Acceptable,
  ): Promise<void> {
    const { dispatcher, runner } = this.deps;
    const controller = new AbortController();
    let answered = false;
    res.once('close', () => {
      if (!answered) controller.abort();
    });
    // SSE at once when the client takes nothing else; otherwise only once a related message must go out
    // before the answer, so an answer that comes first (or an error with its own HTTP status) is plain JSON.
    const eager = accept.sse && !accept.json;
    const streamable =
      eager || (accept.sse && (await dispatcher.wantsStream(request.method, request.params, { canElicit: false })));
    let sse = eager ? this.openStream(res) : undefined;
    const stream = (): SseStream => (sse ??= this.openStream(res));
    const progress = request.params?._meta?.progressToken;
    const progressToken = typeof progress === 'string' || typeof progress === 'number' ? progress : undefined;
    const retry = isRecord(request.params) ? request.params : {};
    const extensions = session.clientCapabilities.extensions;
    const declaresTasks = isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
    const ctx: McpCallContext = {
      principal,
      signal: controller.signal,
      sessionId: undefined,
      progressToken,
      // MRTR: a client that declared elicitation answers input_required results.
      ...(session.clientCapabilities.elicitation !== undefined
        ? {
            inputRequired: {
              ...(isRecord(retry.inputResponses) ? { inputResponses: retry.inputResponses } : {}),
              ...(typeof retry.requestState === 'string' ? { requestState: retry.requestState } : {}),
            },
          }
        : {}),
      // The tasks extension (mcp-revisions §4): a client that declared it may get a task for a tool call.
      ...(dispatcher.servesTasks === true && declaresTasks ? { tasks: true } : {}),
      // Related notifications travel on the request's own stream only; a JSON answer has none.
      notify: async (notification: ServerNotification) => {
        if (!streamable || !shouldSend(notification, progressToken, session.logLevel)) return;
        // SEP-2575: log messages only for a request that asked for them with `_meta` logLevel.
        if (notification.method === 'notifications/message' && session.logLevel === undefined) return;
        if (controller.signal.aborted) return;
        stream().send({ jsonrpc: '2.0', ...notification });
      },
    };
    const answer = this.toModern(
      request.method,
      await runner.answer(session, request, ctx, requestIdOf(res) ?? randomUUID()),
    );
    if (controller.signal.aborted) return sse?.end();
    answered = true;
    const open: SseStream | undefined = sse;
    if (open === undefined) {
      // A capability the client did not declare (-32021) is a 400, as the other envelope errors are.
      const missing = 'error' in answer && answer.error.code === MISSING_REQUIRED_CLIENT_CAPABILITY;
      return send(res, missing ? 400 : 200, answer);
    }
    open.send(answer);
    open.end();
  }

  /**
   * `subscriptions/listen`: an SSE stream that first acknowledges the
   * honoured filter, then carries `notifications/resources/updated` for the
   * run URIs asked for, each tagged with the subscription id (the listen
   * request's id), until the client closes it.
   */
  private listen(res: Response, request: JSONRPCRequest): void {
    const params: unknown = request.params;
    const requested = isRecord(params) && isRecord(params.notifications) ? params.notifications : undefined;
    if (requested === undefined)
      return send(
        res,
        200,
        errorResponse(request.id, INVALID_PARAMS, 'Invalid params: subscriptions/listen needs a notifications filter.'),
      );
    const filter = this.deps.listeners.filterFor(requested);
    const sse = this.openStream(res);
    const remove = this.deps.listeners.add(request.id, filter, (message) => sse.send(message));
    sse.onClose(remove);
    sse.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: filter, _meta: subscriptionMeta(request.id) },
    });
  }

  private openStream(res: Response): SseStream {
    const sse = new SseStream(res, { keepAliveMs: this.deps.keepAliveMs });
    sse.open();
    this.open.add(sse);
    sse.onClose(() => this.open.delete(sse));
    return sse;
  }

  /** A legacy-shaped answer in this revision's terms: decorated results, -32602 for a missing resource. */
  private toModern(method: string, answer: OutgoingMessage): OutgoingMessage {
    if ('result' in answer && answer.id !== undefined) {
      // An input_required result carries only its requests and state, a task result only the task
      // (a tool result's empty content goes).
      const { content: _content, ...rest } = answer.result;
      const kind = answer.result.resultType;
      const result = kind === 'input_required' || kind === 'task' ? rest : answer.result;
      return { ...answer, result: decorateResult(method, result, this.serverInfo()) };
    }
    if ('error' in answer && answer.error.code === LEGACY_RESOURCE_NOT_FOUND)
      return errorResponse(idOf(answer), INVALID_PARAMS, answer.error.message, answer.error.data);
    return answer;
  }

  private serverInfo(): Record<string, unknown> {
    return { ...this.deps.dispatcher.initializeResult('2025-11-25').serverInfo };
  }
}

/** SEP-2575 MissingRequiredClientCapability: the request needs a capability its `_meta` did not declare. */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/**
 * What is wrong with a stateless request's `_meta` envelope (SEP-2575: every
 * request carries the protocol version and the client capabilities;
 * `clientInfo` is a SHOULD), or `undefined` when it is complete.
 */
export function invalidEnvelope(meta: Record<string, unknown> | undefined): string | undefined {
  if (meta === undefined)
    return `a request without a session carries params._meta with "${META.protocolVersion}" and "${META.clientCapabilities}".`;
  if (typeof meta[META.protocolVersion] !== 'string') return `params._meta["${META.protocolVersion}"] is required.`;
  if (!isRecord(meta[META.clientCapabilities])) return `params._meta["${META.clientCapabilities}"] must be an object.`;
  return undefined;
}

/**
 * What is wrong with the retry fields of a multi-round-trip request
 * (SEP-2322): `inputResponses` is a map of objects, `requestState` a string.
 */
export function invalidRetryFields(params: unknown): string | undefined {
  if (!isRecord(params)) return undefined;
  const { inputResponses, requestState } = params;
  if (inputResponses !== undefined && (!isRecord(inputResponses) || !Object.values(inputResponses).every(isRecord)))
    return 'inputResponses must map each input request key to its result object.';
  if (requestState !== undefined && typeof requestState !== 'string') return 'requestState must be a string.';
  return undefined;
}

const MODERN_VERSIONS_TEXT = ALL_PROTOCOL_VERSIONS.filter(isModernVersion).join(', ');
const LEGACY_VERSIONS_TEXT = ALL_PROTOCOL_VERSIONS.filter((v) => !isModernVersion(v)).join(', ');

/** True for a POST that takes the stateless path: a single message whose `_meta` names a protocol version. */
export function isStatelessPost(body: unknown): boolean {
  return !Array.isArray(body) && metaVersionOf(body) !== undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function send(res: Response, status: number, body: OutgoingMessage): void {
  writeJson(res, status, body);
}
