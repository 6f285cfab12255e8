/**
 * `docker compose up` without Docker (issue "Images and compose"): the four
 * built apps (`dist/`) run as local processes with exactly the environment
 * docker-compose.yml gives their containers, compose service hostnames
 * (`redis`, `postgres`) mapped to 127.0.0.1. A smoke call goes through it the
 * way the documented first login does (docs/deployment.md): the generated
 * admin password from the gateway's first start, a login, an MCP session
 * over Streamable HTTP, a tool call that crosses the bus. Then each app's
 * `/metrics` (docs/architecture.md "Deployment") shows that traffic.
 *
 * Only what must differ for a shared test machine is overridden, listed in
 * ISOLATION: ports (free ones instead of 8080/9464/808x), the bus prefix and
 * the schemas (fresh ones, dropped afterwards), the log level; and the
 * gateway's DAGU_ENCRYPTION_KEY, which a real start reads from `.env`; and
 * the apps' PostgreSQL role names (suffixed with this run's id: roles are
 * global to the PostgreSQL cluster, dropped afterwards).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { z } from 'zod';
import { connectClient, freePort } from '../e2e/stack';
import { APPS, ROOT, type AppName } from './app-config';
import { loadCompose, type ComposeModel } from './compose';
import { sampleValue, scrape, type Sample } from './prometheus';

interface RunningApp {
  readonly app: AppName;
  readonly child: ChildProcess;
  readonly env: Record<string, string>;
  readonly healthPort: number;
  readonly metricsPort: number;
}

const id = randomBytes(4).toString('hex');
const logs: string[] = [];
const running: RunningApp[] = [];
let compose: ComposeModel;

/** Rewrites URLs that point at a compose service (e.g. `redis://redis:6379`) to 127.0.0.1. */
function mapServiceHosts(env: Readonly<Record<string, string>>, hosts: readonly string[]): Record<string, string> {
  const mapped: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    mapped[key] = value;
    if (!/^[a-z]+:\/\//.test(value)) continue;
    const url = new URL(value);
    if (!hosts.includes(url.hostname)) continue;
    url.hostname = '127.0.0.1';
    mapped[key] = url.toString();
  }
  return mapped;
}

/** What this test changes in compose's environment so that it runs beside anything else on the machine. */
/** `DATABASE_URL` with this run's own role name (`dagu_run` → `dagu_run_<id>`). */
function isolatedRole(databaseUrl: string | undefined): string {
  const url = new URL(databaseUrl ?? '');
  url.username = `${url.username}_${id}`;
  return url.toString();
}

async function isolation(app: AppName): Promise<Record<string, string>> {
  const common = {
    BUS_PREFIX: `deploy-${id}`,
    DB_SCHEMA: `deploy_${id}_${app.replace(/-/g, '_')}`,
    LOG_LEVEL: 'warn',
    DATABASE_URL:
      mapServiceHosts({ DATABASE_URL: isolatedRole(compose.services[app]?.environment.DATABASE_URL) }, ['postgres'])
        .DATABASE_URL ?? '',
  };
  if (app === 'mcp-gateway')
    return {
      ...common,
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      DAGU_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
  return { ...common, OPS_PORT: String(await freePort()) };
}

async function startApp(app: AppName): Promise<RunningApp> {
  const service = compose.services[app];
  if (service === undefined) throw new Error(`no compose service ${app}`);
  const env = { ...mapServiceHosts(service.environment, Object.keys(compose.services)), ...(await isolation(app)) };
  const child = spawn(process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => logs.push(`[${app}] ${d.toString()}`));
  child.stderr?.on('data', (d: Buffer) => logs.push(`[${app}] ${d.toString()}`));
  const healthPort = Number(app === 'mcp-gateway' ? env.PORT : env.OPS_PORT);
  const metricsPort = Number(app === 'mcp-gateway' ? env.METRICS_PORT : env.OPS_PORT);
  return { app, child, env, healthPort, metricsPort };
}

async function waitUntilReady(app: RunningApp, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (app.child.exitCode !== null) throw new Error(`${app.app} exited with ${app.child.exitCode}\n${logs.join('')}`);
    const status = await fetch(`http://127.0.0.1:${app.healthPort}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`${app.app} not ready within ${timeoutMs} ms\n${logs.join('')}`);
}

function app(name: AppName): RunningApp {
  const found = running.find((r) => r.app === name);
  if (found === undefined) throw new Error(`${name} is not running`);
  return found;
}

beforeAll(async () => {
  compose = loadCompose();
  // Services first, the gateway last: compose's depends_on order.
  for (const name of [...APPS.filter((a) => a !== 'mcp-gateway'), 'mcp-gateway' as const])
    running.push(await startApp(name));
  for (const r of running) await waitUntilReady(r, 30_000);
}, 60_000);

afterAll(async () => {
  await Promise.all(
    running.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  const gateway = running.find((r) => r.app === 'mcp-gateway');
  if (gateway === undefined) return;
  const pool = new Pool({ connectionString: gateway.env.DATABASE_ADMIN_URL });
  for (const r of running) {
    await pool.query(`DROP SCHEMA IF EXISTS "${r.env.DB_SCHEMA ?? ''}" CASCADE`);
    const role = new URL(r.env.DATABASE_URL ?? '').username;
    await pool.query(`DROP OWNED BY "${role}"`).catch(() => undefined);
    await pool.query(`DROP ROLE IF EXISTS "${role}"`);
  }
  await pool.end();
  const redis = new Redis(gateway.env.REDIS_URL ?? '');
  const keys = await redis.keys(`deploy-${id}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}, 30_000);

describe('the compose stack as local processes', () => {
  let samples: Sample[];

  it("connects each app as its own PostgreSQL role, which can read no other app's schema (docs/security.md)", async () => {
    const roles = running.map((r) => new URL(r.env.DATABASE_URL ?? '').username);
    expect(new Set(roles).size).toBe(running.length);
    const gatewaySchema = app('mcp-gateway').env.DB_SCHEMA ?? '';
    for (const name of ['run-service', 'dag-service', 'wiki-service', 'agent-service'] as const) {
      const own = new Pool({ connectionString: app(name).env.DATABASE_URL, max: 1 });
      try {
        expect((await own.query('SELECT current_user AS u')).rows[0]).toEqual({ u: roles[running.indexOf(app(name))] });
        await expect(own.query(`SELECT value FROM "${gatewaySchema}".settings`)).rejects.toThrow(/permission denied/);
        await own.query(`SELECT count(*) FROM "${app(name).env.DB_SCHEMA ?? ''}".schema_migrations`);
      } finally {
        await own.end();
      }
    }
  });

  it('serves the documented first login and an MCP tool call that crosses the bus', async () => {
    const gateway = app('mcp-gateway');
    const printed = /First admin created: username "([^"]+)", password "([^"]+)"/.exec(logs.join(''));
    expect(printed?.[1]).toBe(compose.services['mcp-gateway']?.environment.ADMIN_USERNAME);
    const base = `http://127.0.0.1:${gateway.healthPort}`;
    const login = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: printed?.[1], password: printed?.[2] }),
    });
    expect(login.status).toBe(200);
    const { token } = z.object({ token: z.string() }).parse(await login.json());

    const client = await connectClient(`${base}/mcp`, { authorization: `Bearer ${token}` });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('dagu_read');
      const result = await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
      expect(result.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('exports the gateway metrics on the metrics port: HTTP by route and MCP method, bus calls, process', async () => {
    const gateway = app('mcp-gateway');
    samples = await scrape(`http://127.0.0.1:${gateway.metricsPort}/metrics`);
    const http = 'dagu_http_request_duration_seconds_count';
    expect(
      sampleValue(samples, http, {
        app: 'mcp-gateway',
        route: '/mcp',
        method: 'POST',
        status: '200',
        mcp_method: 'tools/call',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, http, { route: '/mcp', mcp_method: 'initialize' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, http, { route: '/api/v1/auth/login', method: 'POST', status: '200' })).toBe(1);
    expect(
      sampleValue(samples, 'dagu_bus_call_duration_seconds_count', {
        service: 'dag',
        op: 'dag.listIfChanged',
        outcome: 'ok',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'process_resident_memory_bytes', { app: 'mcp-gateway' })).toBeGreaterThan(0);
    // Route labels are templates, never raw URLs (bounded cardinality).
    const routes = new Set(samples.filter((s) => s.name === http).map((s) => s.labels.route));
    for (const route of routes) expect(route).toMatch(/^(unmatched|\/[A-Za-z0-9/:_.-]*)$/);
  });

  it('never serves /metrics on the public port', async () => {
    const res = await fetch(`http://127.0.0.1:${app('mcp-gateway').healthPort}/metrics`);
    expect(res.status).toBe(404);
  });

  it.each(['dag-service', 'run-service', 'wiki-service', 'agent-service'] as const)(
    '%s exports job durations, queue depth and process metrics on its ops port',
    async (name) => {
      const service = app(name);
      const own = await scrape(`http://127.0.0.1:${service.metricsPort}/metrics`);
      expect(sampleValue(own, 'process_resident_memory_bytes', { app: name })).toBeGreaterThan(0);
      expect(sampleValue(own, 'dagu_bus_queue_jobs', { state: 'waiting' })).toBeGreaterThanOrEqual(0);
      if (name === 'dag-service') {
        expect(
          sampleValue(own, 'dagu_bus_job_duration_seconds_count', {
            service: 'dag',
            op: 'dag.listIfChanged',
            outcome: 'ok',
          }),
        ).toBeGreaterThanOrEqual(1);
      }
    },
  );
});
