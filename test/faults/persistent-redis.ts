/**
 * The fault suite's own Redis (issue 18, CONTRIBUTING "Tests": a test that
 * stops Redis starts its own): `redis-server` on a spare 127.0.0.1 port with
 * an append-only file in a temporary directory, fsynced on every write, so a
 * stop and start is a restart of the same data, as in production (BullMQ
 * asks for AOF persistence), not a flush. The empty-restart case is the
 * runtime fixture's (packages/runtime/test-fixtures/throwaway-redis.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freeTcpPort } from '../../packages/runtime/test-fixtures/throwaway-postgres';

/** A running (or stopped) persistent Redis of the fault suite. */
export interface PersistentRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Stops it with `signal` (SIGTERM: a clean stop; SIGKILL: a crash, the AOF still holds every write) and waits. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data; resolves once it answers PING. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  destroy(): Promise<void>;
}

/** Starts the suite's Redis (`REDIS_SERVER` names the binary; default `redis-server`). */
export async function startPersistentRedis(): Promise<PersistentRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'fault-redis-'));
  const port = await freeTcpPort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    if (child !== undefined) return;
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
    args.push('--appendonly', 'yes', '--appendfsync', 'always', '--daemonize', 'no');
    const proc = spawn(process.env.REDIS_SERVER ?? 'redis-server', args, { stdio: 'ignore' });
    child = proc;
    proc.once('exit', () => {
      if (child === proc) child = undefined;
    });
    await waitForPing(port, () => child === proc);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const proc = child;
    if (proc === undefined) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(signal);
    });
    child = undefined;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    async destroy() {
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until Redis answers PING (it may still be loading its AOF), 15 s at most. */
async function waitForPing(port: number, alive: () => boolean): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (!alive()) throw new Error(`redis-server on port ${port} exited while starting`);
    const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    redis.on('error', () => undefined);
    const ok = await redis
      .connect()
      .then(() => redis.ping())
      .then((pong) => pong === 'PONG')
      .catch(() => false);
    redis.disconnect();
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within 15 s`);
}
