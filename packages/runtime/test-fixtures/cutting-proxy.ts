import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real Redis or PostgreSQL that loses one answer on purpose: the
 * first client chunk holding `marker` is passed on to Redis, and then the
 * client's connection is cut before any answer comes back, as when the server
 * goes away right after running a command (a Redis insert, a PostgreSQL COMMIT). Every other byte passes through.
 */
export class CuttingProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private marker: string | undefined;
  /** How many chunks were passed on and then cut. */
  cuts = 0;

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {
    this.server = createServer((client) => this.pipe(client));
  }

  /** Starts listening on a free port of 127.0.0.1; resolves with its `host:port`. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    return `127.0.0.1:${address.port}`;
  }

  /** Cuts the next connection that sends `marker`, after passing the chunk on. */
  cutAfter(marker: string): void {
    this.marker = marker;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.upstreamPort, this.upstreamHost);
    this.sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      const marker = this.marker;
      if (marker !== undefined && chunk.includes(marker)) {
        this.marker = undefined;
        this.cuts += 1;
        client.destroy(); // no answer reaches the caller
        upstream.end(chunk); // Redis still reads and runs the command, then sees the close
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!client.destroyed) client.write(chunk);
    });
    client.on('close', () => {
      this.sockets.delete(client);
      if (!upstream.writableEnded) upstream.destroy();
    });
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    client.on('error', drop);
    upstream.on('error', drop);
  }
}
