/**
 * A Redis server of the test's own (CONTRIBUTING "Tests"): `redis-server` on a
 * free 127.0.0.1 port with no persistence, which the test may stop (SIGKILL
 * or SIGTERM) and start again on the same port as often as it likes. Reused
 * by the fault suite (issue 18); keep it free of app imports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { freeTcpPort } from './throwaway-postgres';

/** A running (or stopped) throwaway Redis. */
export interface ThrowawayRedis {
  /** Its port on 127.0.0.1 (kept across stop/start). */
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Stops it (`SIGKILL` by default: an outage, not a clean shutdown) and waits for the exit. No-op when stopped. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted); resolves once it accepts connections. */
  start(): Promise<void>;
  /** True between a start and a stop. */
  readonly running: boolean;
}

/**
 * Starts a throwaway `redis-server` (`REDIS_SERVER` names the binary, default
 * `redis-server` on PATH).
 *
 * @throws when the server does not accept connections within 10 s
 */
export async function startThrowawayRedis(options: { port?: number } = {}): Promise<ThrowawayRedis> {
  const port = options.port ?? (await freeTcpPort());
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    if (child !== undefined) return;
    const proc = spawn(
      process.env.REDIS_SERVER ?? 'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    child = proc;
    proc.once('exit', () => {
      if (child === proc) child = undefined;
    });
    await waitForPort(port, 10_000, () => child === proc);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    async stop(signal: NodeJS.Signals = 'SIGKILL') {
      const proc = child;
      if (proc === undefined) return;
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill(signal);
      });
      child = undefined;
    },
    start,
  };
}

async function waitForPort(port: number, timeoutMs: number, alive: () => boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!alive()) throw new Error(`redis-server on port ${port} exited while starting`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not start within ${timeoutMs} ms`);
}
