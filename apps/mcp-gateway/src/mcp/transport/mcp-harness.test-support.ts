import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createLogger, type Logger } from '@dagu-mcp/runtime';
import { createApp } from '../../app';
import { createMcpDispatcher } from '../mcp-dispatcher';
import type { McpHandlers, ToolHandler } from '../mcp-types';
import { McpSessionManager } from '../session-manager';
import { createSseBlockReader, type SseBlock } from '../../../../../packages/runtime/test-fixtures/sse-blocks';

/**
 * Test support for the MCP transport's integration tests (real Redis): a
 * gateway "replica" is the real app (`createApp`: guards, body parser,
 * handler) around a real {@link McpSessionManager}, with a fake
 * authentication that takes the principal id from `x-test-principal`
 * (default `alice`) and fake tools. Several replicas with one prefix share
 * sessions, as gateway processes do. HTTP goes through `node:http` without
 * keep-alive, so no client socket or timer outlives a request.
 */

export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Unlinks every key under `prefix:` (a test file's sessions, subscriptions and events). */
export { deleteKeysWithPrefix } from '../../../../../packages/bus/test-fixtures/bus-test-env';
/** SSE blocks as read by {@link openSse} (the parser `test/e2e` uses too). */
export type { SseBlock } from '../../../../../packages/runtime/test-fixtures/sse-blocks';

/** One in-process gateway replica. */
export interface TestReplica {
  readonly url: string;
  readonly manager: McpSessionManager;
  close(): Promise<void>;
}

/** Options of {@link startReplica}. */
export interface ReplicaOptions {
  readonly prefix: string;
  readonly idleTtlMs?: number;
  /** Session record reuse, ms; default 1000 as in production (`SESSION_CACHE_MS`). */
  readonly sessionCacheMs?: number;
  readonly keepAliveMs?: number;
  readonly tools?: Readonly<Record<string, ToolHandler>>;
  /** `resources/read` of every URI; default a text `content`. */
  readonly readResource?: McpHandlers['readResource'];
  /** The replica's logger; default silent. */
  readonly logger?: Logger;
  readonly maxBatchMessages?: number;
  readonly maxSessionRecordBytes?: number;
  readonly maxSubscriptions?: number;
  readonly maxSessionsPerPrincipal?: number;
  /** Authentication of `/mcp`, run before the body is read; default: the `x-test-principal` header. */
  readonly authenticate?: RequestHandler;
}

function fakeAuth(req: Request, res: Response, next: NextFunction): void {
  const id = req.header('x-test-principal') ?? 'alice';
  res.locals.principal = { id, subject: id, role: 'admin', credentialType: 'none' };
  next();
}

/** Starts a replica on a free port of 127.0.0.1. */
export async function startReplica(options: ReplicaOptions): Promise<TestReplica> {
  const logger = options.logger ?? createLogger({ name: 'mcp-test', level: 'silent' });
  const handlers: McpHandlers = {
    tools: options.tools ?? {},
    listResources: () => [{ uri: 'dagu://reference', name: 'dagu_references' }],
    listResourceTemplates: () => [{ uriTemplate: 'dagu://reference/{topic}', name: 'dagu_reference' }],
    readResource:
      options.readResource ?? (async (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'content' }] })),
    audit: () => undefined,
  };
  const manager = new McpSessionManager({
    redisUrl: TEST_REDIS_URL,
    prefix: options.prefix,
    logger,
    idleTtlMs: options.idleTtlMs ?? 60_000,
    sessionCacheMs: options.sessionCacheMs ?? 1000,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    retryMs: 200,
    eventRetentionMs: 60_000,
    eventMaxLen: 1000,
    clientRequestTimeoutMs: 5_000,
    ...(options.maxBatchMessages !== undefined ? { maxBatchMessages: options.maxBatchMessages } : {}),
    ...(options.maxSessionRecordBytes !== undefined ? { maxSessionRecordBytes: options.maxSessionRecordBytes } : {}),
    ...(options.maxSubscriptions !== undefined ? { maxSubscriptions: options.maxSubscriptions } : {}),
    ...(options.maxSessionsPerPrincipal !== undefined
      ? { maxSessionsPerPrincipal: options.maxSessionsPerPrincipal }
      : {}),
    createDispatcher: ({ sessions }) => createMcpDispatcher({ handlers, sessions, version: 'test' }),
  });
  await manager.start();
  const app = createApp({
    logger,
    sessions: manager,
    basePath: '',
    bodyLimitBytes: 4 * 1024 * 1024,
    version: 'test',
    trustProxy: false,
    readiness: {},
    authenticateMcp: options.authenticate ?? fakeAuth,
    authenticateRest: fakeAuth,
    restRoutes: [],
    mcpOrigins: { allowedOrigins: [], allowedHosts: ['localhost', '127.0.0.1', '::1'] },
  });
  const server: Server = await new Promise((resolve) => {
    const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    manager,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await manager.closeAll();
    },
  };
}

/** A finished HTTP exchange. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (`undefined` when it is not JSON). */
  readonly json: unknown;
}

/** Default headers of an MCP POST. */
export const POST_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** One HTTP request without connection reuse; resolves with the whole answer. */
export function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown },
): Promise<HttpAnswer> {
  const body =
    init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: init.method ?? 'POST',
        headers: { ...(init.method === 'GET' || init.method === 'DELETE' ? {} : POST_HEADERS), ...init.headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `initialize` as `principal`; resolves with the new session id. */
export async function initialize(
  url: string,
  principal = 'alice',
  protocolVersion = '2025-11-25',
  capabilities: Record<string, unknown> = {},
): Promise<string> {
  const answer = await send(url, {
    headers: { 'x-test-principal': principal },
    body: {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities, clientInfo: { name: 'test', version: '1' } },
    },
  });
  const sid = answer.headers['mcp-session-id'];
  if (answer.status !== 200 || typeof sid !== 'string')
    throw new Error(`initialize failed: ${answer.status} ${answer.text}`);
  return sid;
}

/** An open SSE response being read. */
export interface SseReader {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly blocks: SseBlock[];
  /** Resolves with the first block (already read or coming) that matches, or rejects after `timeoutMs`. */
  next(match: (block: SseBlock) => boolean, timeoutMs?: number): Promise<SseBlock>;
  /** Resolves when the server ended the response. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens a request whose answer is read as SSE as it arrives (GET streams, POSTs answered as SSE). */
export function openSse(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown },
): Promise<SseReader> {
  const method = init.method ?? 'GET';
  const headers =
    method === 'GET' ? { accept: 'text/event-stream', ...init.headers } : { ...POST_HEADERS, ...init.headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const reader = createSseBlockReader({ defaultTimeoutMs: 5_000 });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => reader.push(chunk));
      const ended = new Promise<void>((done) => res.once('close', () => done()));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        blocks: reader.blocks,
        next: reader.next,
        ended,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    req.end(body);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
