import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

/**
 * A private redis-server on its own port (no persistence), for tests that
 * stop and restart Redis without touching the shared one. `redis-server`
 * must be on PATH.
 */
export class ThrowawayRedis {
  private process: ChildProcess | undefined;

  constructor(readonly port: number = 20_000 + Math.floor(Math.random() * 20_000)) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server and resolves once it answers PING (rejects after 5 s). */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    this.process = child;
    const until = Date.now() + 5000;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited with ${child.exitCode} (port ${this.port} in use?).`);
      if (await this.answers()) return;
      if (Date.now() > until) throw new Error('redis-server did not start within 5 s.');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops the server (SIGTERM) and resolves once the process has exited. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }

  private async answers(): Promise<boolean> {
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  }
}
