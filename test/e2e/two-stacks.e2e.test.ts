/**
 * Issue 53 item 2: two `npm start` stacks side by side on one machine. Each is
 * scripts/run-stack.js (what `npm start` runs after the build) with only its
 * own `PORT`, `BUS_PREFIX` and database set; the second finds the first's ops
 * and metrics ports taken, picks free ones, says so in its `ports:` line, and
 * both come up ready. `STACK_PORT_BASE` pinning is checked on the port plan.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Pool } from 'pg';
import { deleteKeysWithPrefix } from '../../packages/bus/test-fixtures/bus-test-env';
import { freePort, TEST_DATABASE_URL } from './stack';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the plain-JS script npm start runs
const { planStackPorts } = require('../../scripts/stack-ports.js') as {
  planStackPorts: (env: Record<string, string>) => Promise<{
    gateway: number;
    metrics: number;
    services: Record<string, number>;
    replaced: string[];
  }>;
};

const ROOT = join(__dirname, '..', '..');
const admin = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
const databases: string[] = [];
const prefixes: string[] = [];
const stacks: ChildProcess[] = [];

afterAll(async () => {
  for (const child of stacks) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-(child.pid ?? 0), 'SIGINT');
    await exited;
  }
  for (const db of databases) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  for (const prefix of prefixes) await deleteKeysWithPrefix(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix);
  await admin.end();
});

interface StartedStack {
  readonly port: number;
  /** Ctrl-C (SIGINT to its process group, as a terminal sends it); resolves with the exit code. */
  stop(): Promise<number | null>;
  output(): string;
  /** The `ports:` line's numbers: gateway, each service, metrics. */
  ports(): Record<string, number>;
}

/** Starts run-stack.js with only PORT, BUS_PREFIX and a database of its own. */
async function startOwnStack(): Promise<StartedStack> {
  const id = randomBytes(4).toString('hex');
  const database = `two_stacks_${id}`;
  await admin.query(`CREATE DATABASE "${database}"`);
  databases.push(database);
  const port = await freePort();
  prefixes.push(`two-stacks-${id}`);
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-stack.js')], {
    detached: true, // its own process group, as a shell gives a foreground job
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      BUS_PREFIX: `two-stacks-${id}`,
      DATABASE_URL: TEST_DATABASE_URL.replace(/\/[^/]*$/, `/${database}`),
    },
  });
  stacks.push(child);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const ports = (): Record<string, number> => {
    const line = /ports: ([^\n]*)/.exec(output)?.[1] ?? '';
    return Object.fromEntries(
      [...line.replace(/ \(.*$/, '').matchAll(/([a-z-]+) (\d+)/g)].map((m) => [m[1] ?? '', Number(m[2])]),
    );
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = (): Promise<number | null> => {
    if (child.exitCode === null) process.kill(-(child.pid ?? 0), 'SIGINT');
    return exited;
  };
  return { port, output: () => output, ports, stop };
}

async function isReady(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/readyz`).then(
    (r) => r.status === 200,
    () => false,
  );
}

/** Waits until the gateway and every service of the stack answer `/readyz` 200. */
async function waitReady(stack: StartedStack, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ports = stack.ports();
    const services = ['dag-service', 'run-service', 'wiki-service', 'agent-service'].map((app) => ports[app] ?? 0);
    if (services.every((p) => p > 0)) {
      const ready = await Promise.all([stack.port, ...services].map(isReady));
      if (ready.every(Boolean)) return;
    }
    if (/stopping the stack/.test(stack.output())) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`stack on ${stack.port} did not become ready:\n${stack.output().slice(-4000)}`);
}

test('a second npm start comes up beside a running one: taken ops and metrics ports are replaced and printed', async () => {
  const first = await startOwnStack();
  await waitReady(first);
  const second = await startOwnStack();
  await waitReady(second);
  const a = first.ports();
  const b = second.ports();
  expect(a.gateway).toBe(first.port);
  expect(b.gateway).toBe(second.port);
  // No port of the second stack is one of the first's, and every default the first holds is reported taken.
  for (const app of ['dag-service', 'run-service', 'wiki-service', 'agent-service', 'metrics'])
    expect(Object.values(a)).not.toContain(b[app]);
  const defaults: Record<string, number> = {
    'dag-service': 8081,
    'run-service': 8082,
    'wiki-service': 8083,
    'agent-service': 8084,
    metrics: 9464,
  };
  for (const [app, port] of Object.entries(defaults))
    if (a[app] === port) expect(second.output()).toContain(`${app} ${port} taken, using ${b[app]}`);
  const metrics = await fetch(`http://127.0.0.1:${b.metrics}/metrics`);
  expect(metrics.status).toBe(200);
  for (const stack of [first, second]) expect(stack.output()).not.toContain('EADDRINUSE');
  // A normal stop is quiet (issue 53 item 6): no warning, no Redis "Connection is closed", no stack trace.
  for (const stack of [second, first]) {
    expect(await stack.stop()).toBe(0);
    const afterStop = stack.output().slice(stack.output().indexOf('shutting down'));
    expect(afterStop).toContain('gateway stopped');
    expect(afterStop).not.toMatch(/"level":(40|50|60)/);
    expect(stack.output()).not.toContain('Connection is closed');
    expect(stack.output()).not.toMatch(/^\S*\s+at \S/m);
  }
}, 240_000);

test('STACK_PORT_BASE=N pins the ports: gateway N, services N+1…N+4, metrics N+5', async () => {
  const plan = await planStackPorts({ STACK_PORT_BASE: '21000', PORT: '9999', OPS_PORT: '0' });
  expect(plan).toEqual({
    gateway: 21000,
    services: { 'dag-service': 21001, 'run-service': 21002, 'wiki-service': 21003, 'agent-service': 21004 },
    metrics: 21005,
    replaced: [],
  });
  await expect(planStackPorts({ STACK_PORT_BASE: '65531' })).rejects.toThrow('STACK_PORT_BASE must be 1-65530');
  await expect(planStackPorts({ PORT: 'http' })).rejects.toThrow('PORT must be a port (0-65535), got "http"');
});
