import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@dagu-mcp/runtime';
import { sendJsonRpcError } from '../http/json-rpc-error';

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  lastSeen: number;
}

/**
 * Holds the MCP sessions of this gateway process (Streamable HTTP, spec 020
 * §Endpoint): one SDK `Server` + transport per session, created on
 * `initialize`, ended by DELETE or after `idleTtlMs` without requests.
 *
 * Sessions live in this process for now; the protocol issue moves their state
 * to Redis so any replica serves any session.
 */
export class McpSessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  /**
   * @param opts.createServer builds the MCP server of a new session
   * @param opts.idleTtlMs    idle time after which a session is closed, ms
   */
  constructor(private readonly opts: { createServer: () => Server; idleTtlMs: number; logger: Logger }) {
    this.sweeper = setInterval(() => void this.closeIdle(), Math.min(opts.idleTtlMs, 60_000));
    this.sweeper.unref();
  }

  /** Number of live sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** Serves one POST, GET or DELETE on the MCP endpoint. `req.body` is the parsed JSON (POST). */
  async handle(req: Request, res: Response): Promise<void> {
    const sessionId = req.header('mcp-session-id');
    if (sessionId === undefined) {
      if (req.method === 'POST' && isInitializeRequest(req.body)) return this.initialize(req, res);
      return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required.', idOf(req.body));
    }
    const session = this.sessions.get(sessionId);
    if (session === undefined) {
      return sendJsonRpcError(res, 404, -32001, 'Session not found.', idOf(req.body));
    }
    session.lastSeen = Date.now();
    await session.transport.handleRequest(req, res, req.body);
  }

  private async initialize(req: Request, res: Response): Promise<void> {
    const server = this.opts.createServer();
    const transport = new StreamableHTTPServerTransport({
      // 32 random bytes as hex: visible ASCII, unguessable.
      sessionIdGenerator: () => randomBytes(32).toString('hex'),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, lastSeen: Date.now() });
        this.opts.logger.debug({ sessionId: id }, 'mcp session opened');
      },
      onsessionclosed: (id) => this.forget(id),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.forget(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  private forget(id: string): void {
    if (this.sessions.delete(id)) this.opts.logger.debug({ sessionId: id }, 'mcp session closed');
  }

  private async closeIdle(): Promise<void> {
    const cutoff = Date.now() - this.opts.idleTtlMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.forget(id);
        await session.server.close().catch(() => undefined);
      }
    }
  }

  /** Closes every session (graceful shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => undefined)));
  }
}

function idOf(body: unknown): string | number | null {
  if (typeof body === 'object' && body !== null && 'id' in body) {
    const id = (body as { id: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') return id;
  }
  return null;
}
