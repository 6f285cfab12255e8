import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';

/**
 * A plain round-robin HTTP load balancer for end-to-end tests: every request
 * (POST, GET stream, DELETE) goes to the next upstream in turn, with no
 * session affinity — the setup that makes gateways with in-memory sessions
 * answer "Session not found". Bodies are buffered (so a request can be
 * retried on the next upstream when one refuses the connection, as a real
 * balancer's health check would route around a dead replica); responses
 * stream through unbuffered (SSE). The `Host` header is passed as is.
 */
export class RoundRobinProxy {
  private next = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  /** Which upstream port served each request, in order (`METHOD port`). */
  readonly routed: string[] = [];
  /** The MCP era marks of each request, in the order of {@link routed}: its `MCP-Protocol-Version` and `Mcp-Session-Id`. */
  readonly eras: { protocolVersion: string | undefined; sessionId: string | undefined }[] = [];

  constructor(private readonly upstreams: readonly number[]) {}

  /** Starts listening on `port` of 127.0.0.1. */
  async listen(port: number): Promise<void> {
    const server = createServer((req, res) => void this.forward(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.requestTimeout = 0;
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  }

  /** Stops listening and drops open connections. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    const body = Buffer.concat(chunks);
    // Each upstream once, from this request's turn on (concurrent requests move `next` too,
    // so reading it per attempt could try a dead upstream twice and never the live one).
    const first = this.next++;
    for (let attempt = 0; attempt < this.upstreams.length; attempt++) {
      const port = this.upstreams[(first + attempt) % this.upstreams.length] ?? 0;
      const outcome = await this.tryUpstream(port, req, res, body);
      if (outcome === 'dropped') return;
      if (outcome === 'done') {
        this.routed.push(`${req.method ?? ''} ${port}`);
        const header = (name: string) => (typeof req.headers[name] === 'string' ? req.headers[name] : undefined);
        this.eras.push({ protocolVersion: header('mcp-protocol-version'), sessionId: header('mcp-session-id') });
        return;
      }
    }
    if (!res.headersSent)
      res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'no upstream answered' }));
  }

  /**
   * `refused` when the upstream could not be reached (try the next); `done` once a response started;
   * `dropped` when the upstream took the request and died before answering: like a real balancer
   * (nginx does not pass a non-idempotent request on), the client's connection drops, for the
   * request may have been applied.
   */
  private tryUpstream(
    port: number,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
  ): Promise<'done' | 'refused' | 'dropped'> {
    return new Promise((resolve) => {
      let started = false;
      const headers = { ...req.headers, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      const upstream = httpRequest(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers },
        (answer) => {
          started = true;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.flushHeaders();
          answer.on('data', (chunk: Buffer) => res.write(chunk));
          answer.on('end', () => res.end());
          // The upstream died mid-response: the client sees its connection drop, as behind a real balancer.
          answer.on('error', () => res.destroy());
          answer.on('close', () => {
            if (!answer.complete) res.destroy();
          });
          resolve('done');
        },
      );
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (!started && error.code === 'ECONNREFUSED') return resolve('refused');
        res.destroy();
        resolve('dropped');
      });
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  }
}
