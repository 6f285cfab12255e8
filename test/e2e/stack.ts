import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Pool } from 'pg';
import { deleteKeysWithPrefix } from '../../packages/bus/test-fixtures/bus-test-env';
import { freeTcpPort } from '../../packages/runtime/test-fixtures/throwaway-postgres';
import { RoundRobinProxy } from './round-robin-proxy';

const ROOT = join(__dirname, '..', '..');
const APPS = ['dag-service', 'run-service', 'wiki-service', 'agent-service', 'mcp-gateway'] as const;
export const TEST_DATABASE_URL = process.env.E2E_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A stack of the five built apps started as local processes, isolated by a random bus prefix and schemas. */
export interface Stack {
  readonly baseUrl: string;
  readonly mcpUrl: string;
  readonly id: string;
  readonly schemas: readonly string[];
  /** The PostgreSQL schema of one app of the stack (its `DB_SCHEMA`). */
  readonly schemaOf: (app: (typeof APPS)[number]) => string;
  readonly output: () => string;
  /** Starts one more process of an app (e.g. a second replica) with the stack's environment. */
  readonly spawnApp: (app: (typeof APPS)[number], extraEnv?: Record<string, string>) => Promise<ChildProcess>;
  /** The processes of an app started so far (by the stack, then by {@link Stack.spawnApp}), oldest first. */
  readonly processesOf: (app: (typeof APPS)[number]) => readonly ChildProcess[];
  /** The environment a process of the stack was started with (its `OPS_PORT`, `METRICS_PORT`, …). */
  readonly envOf: (child: ChildProcess) => Readonly<Record<string, string>>;
  /** The gateway processes: one, or `gatewayReplicas` behind {@link Stack.proxy}. */
  readonly gateways: readonly GatewayProcess[];
  /** The round-robin proxy on `baseUrl` when the stack runs several gateway replicas. */
  readonly proxy: RoundRobinProxy | undefined;
  stop(): Promise<void>;
}

/** One gateway process of a stack. */
export interface GatewayProcess {
  readonly port: number;
  /** Its own URL, bypassing the proxy. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Kills it with SIGKILL (a crash: no graceful shutdown) and waits for the exit. */
  kill(): Promise<void>;
}

/** Options of {@link startStack} beyond the environment. */
export interface StackOptions {
  /** Gateway replicas; above 1 they sit behind a {@link RoundRobinProxy} on the stack's port. Default 1. */
  readonly gatewayReplicas?: number;
  /** Also start the test-only MCP conformance fixture (test/fixtures) and enable it on the gateways. */
  readonly conformanceFixture?: boolean;
  /**
   * The PostgreSQL the apps use (their `DATABASE_URL`) and the stack drops its
   * schemas from on stop; default {@link TEST_DATABASE_URL}. A test that stops
   * PostgreSQL passes its own throwaway server's URL (packages/runtime/test-fixtures/throwaway-postgres.ts).
   */
  readonly databaseUrl?: string;
  /**
   * Set `PUBLIC_URL` to the stack's own address (plus `BASE_PATH`): the OAuth issuer
   * every gateway replica shares behind the proxy (issue 23).
   */
  readonly publicUrl?: boolean;
  /** How long the apps get to report healthy, ms (default HEALTH_TIMEOUT_MS, 60 000). */
  readonly healthTimeoutMs?: number;
}

/**
 * How long a starting stack may take to answer its health check, in ms. Generous: on a
 * shared 2-core machine under load, four node processes loading at once have taken over 20 s.
 */
const HEALTH_TIMEOUT_MS = Number(process.env.E2E_START_TIMEOUT_MS ?? 60_000);

/** A free TCP port on 127.0.0.1. */
export const freePort: () => Promise<number> = freeTcpPort;

/**
 * Starts dag-service, run-service, wiki-service, agent-service and the gateway from their
 * `dist/` builds (`npm test` builds first), with their own schemas in the
 * `test` database and their own bus prefix, and waits until the gateway's
 * `/api/v1/health` reports every service reachable over the bus.
 */
export async function startStack(extraEnv: Record<string, string> = {}, options: StackOptions = {}): Promise<Stack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(extraEnv, options);
    } catch (err) {
      // A port from freePort() can be taken by another process before the app binds it
      // (parallel test files): start again on fresh ports.
      if (attempt >= 3 || !String(err).includes('EADDRINUSE')) throw err;
    }
  }
}

async function startStackOnce(extraEnv: Record<string, string>, options: StackOptions): Promise<Stack> {
  const id = randomBytes(4).toString('hex');
  const port = await freePort();
  const logs: string[] = [];
  const children: ChildProcess[] = [];
  const byApp = new Map<(typeof APPS)[number], ChildProcess[]>();
  const envs = new Map<ChildProcess, Readonly<Record<string, string>>>();
  const schemas = APPS.map((app) => `e2e_${id}_${app.replace(/-/g, '_')}`);
  const baseEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    DATABASE_URL: options.databaseUrl ?? TEST_DATABASE_URL,
    BUS_PREFIX: `e2e-${id}`,
    LOG_LEVEL: 'warn',
    // Tests that exercise authentication pass AUTH_MODE themselves.
    AUTH_MODE: 'none',
    // Local test upstreams listen on 127.0.0.1; every other internal address stays refused (issue 42 item 1).
    OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
    ...(options.conformanceFixture === true ? { MCP_TEST_FIXTURE_EXTENSIONS: 'conformance' } : {}),
    ...(options.publicUrl === true ? { PUBLIC_URL: `http://127.0.0.1:${port}${extraEnv.BASE_PATH ?? ''}` } : {}),
    ...extraEnv,
  };
  const spawnApp = async (app: (typeof APPS)[number], more: Record<string, string> = {}): Promise<ChildProcess> => {
    const index = APPS.indexOf(app);
    const env = {
      ...baseEnv,
      DB_SCHEMA: schemas[index] ?? '',
      OPS_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      PORT: String(port),
      ...more,
    };
    const child = spawn(process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => logs.push(`[${app}] ${d.toString()}`));
    child.stderr?.on('data', (d: Buffer) => logs.push(`[${app}] ${d.toString()}`));
    children.push(child);
    envs.set(child, env);
    byApp.set(app, [...(byApp.get(app) ?? []), child]);
    return child;
  };
  for (const app of APPS) if (app !== 'mcp-gateway') await spawnApp(app);
  if (options.conformanceFixture === true) children.push(spawnFixture(baseEnv, logs));
  const replicas = Math.max(1, options.gatewayReplicas ?? 1);
  const gateways: GatewayProcess[] = [];
  for (let i = 0; i < replicas; i++) {
    const own = replicas === 1 ? port : await freePort();
    const child = await spawnApp('mcp-gateway', { PORT: String(own) });
    gateways.push({ port: own, url: `http://127.0.0.1:${own}`, child, kill: () => killHard(child) });
  }
  const proxy = replicas === 1 ? undefined : new RoundRobinProxy(gateways.map((g) => g.port));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stack: Stack = {
    baseUrl,
    mcpUrl: `${baseUrl}/mcp`,
    id,
    schemas,
    schemaOf: (app) => schemas[APPS.indexOf(app)] ?? '',
    output: () => logs.join(''),
    spawnApp,
    processesOf: (app) => byApp.get(app) ?? [],
    envOf: (child) => envs.get(child) ?? {},
    gateways,
    proxy,
    async stop() {
      await proxy?.close();
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGTERM');
            }),
        ),
      );
      const pool = new Pool({ connectionString: options.databaseUrl ?? TEST_DATABASE_URL });
      for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
      // The queues' meta, ids and event streams, sessions: nothing of a stopped stack stays in Redis.
      await deleteKeysWithPrefix(baseEnv.REDIS_URL ?? 'redis://127.0.0.1:6379', baseEnv.BUS_PREFIX ?? `e2e-${id}`);
    },
  };
  try {
    await proxy?.listen(port);
    const alive = () => children.every((c) => c.exitCode === null && c.signalCode === null);
    const healthMs = options.healthTimeoutMs ?? HEALTH_TIMEOUT_MS;
    for (const gateway of gateways) await waitForHealth(gateway.url, healthMs, alive);
    await waitForHealth(baseUrl, healthMs, alive);
  } catch (err) {
    await stack.stop();
    throw new Error(`stack did not become healthy: ${String(err)}\n${logs.join('')}`, { cause: err });
  }
  return stack;
}

async function waitForHealth(baseUrl: string, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    if (!alive()) throw new Error(`an app exited while starting (last health answer: ${last})`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/health`);
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200) return;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(last);
}

/**
 * Starts the conformance fixture (test/fixtures/conformance-service): a
 * test-only MCP extension that the gateways serve as announced when `MCP_TEST_FIXTURE_EXTENSIONS`
 * names it. TypeScript run through the SWC hook; never part of `npm start`.
 */
function spawnFixture(env: Record<string, string>, logs: string[]): ChildProcess {
  const fixtures = join(ROOT, 'test', 'fixtures');
  const child = spawn(
    process.execPath,
    ['-r', join(fixtures, 'ts-register.js'), join(fixtures, 'conformance-service', 'main.ts')],
    {
      env: { PATH: env.PATH ?? '', REDIS_URL: env.REDIS_URL ?? '', BUS_PREFIX: env.BUS_PREFIX ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (d: Buffer) => logs.push(`[conformance-fixture] ${d.toString()}`));
  child.stderr?.on('data', (d: Buffer) => logs.push(`[conformance-fixture] ${d.toString()}`));
  return child;
}

/** SIGKILL and wait for the exit. */
async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Connects the SDK's `Client` over Streamable HTTP (the way any MCP app does). */
export async function connectClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'dagu-mcp-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/**
 * Starts the stack and an SDK client for the enclosing test file or
 * `describe` (jest `beforeAll`, 60 s), closing both in `afterAll`. Read
 * `.stack` and `.client` inside tests (they throw before `beforeAll` ran).
 */
export function useStackAndClient(): { readonly stack: Stack; readonly client: Client } {
  let stack: Stack | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    stack = await startStack();
    client = await connectClient(stack.mcpUrl);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await stack?.stop();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the e2e ${what} is not started yet`);
    return value;
  };
  return {
    get stack() {
      return started(stack, 'stack');
    },
    get client() {
      return started(client, 'client');
    },
  };
}
