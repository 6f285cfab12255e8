/**
 * One fault-suite environment (issue 18): its own Redis (persistent-redis.ts)
 * and PostgreSQL (the runtime's throwaway fixture, run as `postgres`), the
 * four built apps as separate processes on them (test/e2e/stack.ts), and
 * what every scenario checks afterwards: which processes died without being
 * killed by the test, and how long the stack took to answer again.
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../../packages/runtime/test-fixtures/throwaway-postgres';
import { startStack, type Stack } from '../e2e/stack';
import { startPersistentRedis, type PersistentRedis } from './persistent-redis';

/** The apps of a stack. */
export type App = 'dag-service' | 'run-service' | 'wiki-service' | 'mcp-gateway';
const APPS: readonly App[] = ['dag-service', 'run-service', 'wiki-service', 'mcp-gateway'];

/** A started fault environment. */
export interface FaultEnv {
  readonly redis: PersistentRedis;
  readonly pg: ThrowawayPostgres;
  readonly stack: Stack;
  /** SIGKILLs the newest live process of `app` (recorded, so it is no crash) and waits for its exit. */
  kill(app: App): Promise<ChildProcess>;
  /** SIGKILLs gateway replica `index` (stack.gateways) and waits. */
  killGateway(index: number): Promise<void>;
  /** Starts `app` again (a restart by the orchestrator) with the stack's environment and `extraEnv`. */
  restart(app: App, extraEnv?: Record<string, string>): Promise<ChildProcess>;
  /** Processes that exited although the test did not kill them, with their exit code or signal. */
  crashes(): string[];
  stop(): Promise<void>;
}

/** Options of {@link startFaultEnv}. */
export interface FaultEnvOptions {
  readonly gatewayReplicas?: number;
  readonly env?: Record<string, string>;
  /** A password in the apps' `DATABASE_URL` (the throwaway server trusts any; the secrets scan looks for it). */
  readonly databasePassword?: string;
}

/**
 * Starts Redis, PostgreSQL and the stack on them. Logs at `info`, so the
 * secrets scan (secrets-scan.ts) reads what an operator's logs would hold.
 */
export async function startFaultEnv(options: FaultEnvOptions = {}): Promise<FaultEnv> {
  const redis = await startPersistentRedis();
  const pg = await startThrowawayPostgres().catch(async (err: unknown) => {
    await redis.destroy();
    throw err;
  });
  let stack: Stack;
  try {
    stack = await startStack(
      { REDIS_URL: redis.url, LOG_LEVEL: 'info', ...options.env },
      {
        gatewayReplicas: options.gatewayReplicas ?? 1,
        databaseUrl:
          options.databasePassword === undefined
            ? pg.url
            : pg.url.replace('postgres@', `postgres:${encodeURIComponent(options.databasePassword)}@`),
      },
    );
  } catch (err) {
    await pg.destroy();
    await redis.destroy();
    throw err;
  }
  const killed = new Set<ChildProcess>();
  const killHard = async (child: ChildProcess): Promise<void> => {
    killed.add(child);
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  };
  const env: FaultEnv = {
    redis,
    pg,
    stack,
    async kill(app) {
      const live = stack.processesOf(app).filter((c) => c.exitCode === null && c.signalCode === null);
      const child = live.at(-1);
      if (child === undefined) throw new Error(`no live ${app} process to kill`);
      await killHard(child);
      return child;
    },
    async killGateway(index) {
      const gateway = stack.gateways[index];
      if (gateway === undefined) throw new Error(`no gateway replica ${index}`);
      await killHard(gateway.child);
    },
    restart: (app, extraEnv = {}) => stack.spawnApp(app, extraEnv),
    crashes() {
      const out: string[] = [];
      for (const app of APPS)
        for (const child of stack.processesOf(app))
          if (!killed.has(child) && (child.exitCode !== null || child.signalCode !== null))
            out.push(`${app} pid ${child.pid ?? '?'} exited (${child.exitCode ?? child.signalCode ?? '?'})`);
      // Why, when something crashed: the last lines the crashed apps wrote (their stderr says why a start failed).
      if (out.length > 0) {
        const apps = new Set(out.map((line) => line.split(' ')[0]));
        const tail = stack
          .output()
          .split('\n')
          .filter((line) => [...apps].some((app) => line.startsWith(`[${app}]`)))
          .slice(-15);
        out.push(`last log lines:\n${tail.join('\n')}`);
      }
      return out;
    },
    async stop() {
      await pg.start().catch(() => undefined);
      await redis.start().catch(() => undefined);
      await stack.stop().catch(() => undefined);
      await pg.destroy();
      await redis.destroy();
    },
  };
  return env;
}

/**
 * Polls `probe` every 200 ms until it resolves true (a throw counts as false, its message is kept for the failure); resolves with the ms it
 * took, or fails after `boundMs` (the scenario's stated recovery bound).
 */
export async function timeToRecover(probe: () => Promise<boolean>, boundMs: number): Promise<number> {
  const started = Date.now();
  let last: unknown = 'the probe answered false';
  for (;;) {
    const ok = await probe().catch((err: unknown) => {
      last = err;
      return false;
    });
    if (ok) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`not recovered within ${boundMs} ms: ${String(last)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One row of docs/reliability.md's table, as measured by a scenario. */
export interface FaultReportRow {
  readonly fault: string;
  readonly guarantee: string;
  readonly test: string;
  readonly recoveryMs: number | undefined;
  readonly boundMs: number;
  readonly calls: string;
}

/** Where the rows of this run go (`FAULT_REPORT`, default `<tmp>/dagu-fault-report.jsonl`), one JSON line each. */
export const FAULT_REPORT = process.env.FAULT_REPORT ?? join(tmpdir(), 'dagu-fault-report.jsonl');

/** Appends a row to {@link FAULT_REPORT} and prints it (the figures of docs/reliability.md). */
export function report(row: FaultReportRow): void {
  appendFileSync(FAULT_REPORT, `${JSON.stringify(row)}\n`);
  process.stdout.write(`fault report: ${JSON.stringify(row)}\n`);
}

/** Sleeps `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
