/**
 * Starts the built stack (apps/<app>/dist/main.js) as local processes, like
 * test/e2e/stack.ts: its own bus prefix and schemas in the bench database,
 * AUTH_MODE=builtin with a bench admin, LOG_LEVEL=warn. Also starts the
 * baseline server. Every child's output is kept for the report on failure.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const APPS = ['dag-service', 'run-service', 'wiki-service', 'agent-service', 'mcp-gateway'];
export const ADMIN = { username: 'bench-admin', password: 'bench-admin-password-1' };

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. */
export function stopChild(child, graceMs = 15_000) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts dag-service, run-service, wiki-service, agent-service and the gateway and waits
 * until `/api/v1/health` answers 200.
 *
 * @param opts.databaseUrl PostgreSQL URL (the `test` database by default)
 * @param opts.redisUrl    Redis URL
 * @param opts.profileDir  when set, the gateway and dag-service write V8 CPU profiles there on exit
 * @param opts.extraEnv    more environment for every app
 * @param opts.id          reuse the schemas and bus prefix of a stack stopped with `stop({keepData: true})`
 */
export async function startStack(opts) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startStackOnce(opts);
    } catch (err) {
      // A port from freePort() can be taken by another process before the app binds it
      // (a test stack starting at the same time): start again on fresh ports.
      if (attempt >= 3 || !String(err).includes('EADDRINUSE')) throw err;
    }
  }
}

async function startStackOnce({
  databaseUrl,
  redisUrl,
  profileDir,
  extraEnv = {},
  id = randomBytes(4).toString('hex'),
}) {
  const port = await freePort();
  const logs = [];
  const children = new Map();
  const metricsUrls = {};
  const schemas = APPS.map((app) => `bench_${id}_${app.replace(/-/g, '_')}`);
  const baseEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    REDIS_URL: redisUrl,
    DATABASE_URL: databaseUrl,
    BUS_PREFIX: `bench-${id}`,
    LOG_LEVEL: 'warn',
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    // The bench signs in once per run; keep the login limiter out of the way.
    LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
    ...extraEnv,
  };
  /** Spawns one process of `app` (index into APPS: its schema); `name` keys it in `children`. */
  const spawnApp = async (app, index, name) => {
    const env = {
      ...baseEnv,
      DB_SCHEMA: schemas[index],
      OPS_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      PORT: String(port),
    };
    // The gateway serves /metrics on METRICS_PORT, a service on its OPS_PORT.
    metricsUrls[name] = `http://127.0.0.1:${app === 'mcp-gateway' ? env.METRICS_PORT : env.OPS_PORT}/metrics`;
    const args = [];
    if (profileDir !== undefined && (app === 'mcp-gateway' || app === 'dag-service' || app === 'run-service')) {
      mkdirSync(profileDir, { recursive: true });
      args.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`);
    }
    const child = spawn(process.execPath, [...args, join(ROOT, 'apps', app, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d) => {
      logs.push(`[${name}] ${d.toString()}`);
      if (logs.length > 2000) logs.splice(0, logs.length - 2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('exit', (code, signal) => logs.push(`[${name}] exited ${signal ?? code}\n`));
    children.set(name, child);
    return child;
  };
  for (const [index, app] of APPS.entries()) await spawnApp(app, index, app);
  const baseUrl = `http://127.0.0.1:${port}`;
  const stack = {
    id,
    baseUrl,
    mcpUrl: `${baseUrl}/mcp`,
    schemas,
    /** The schema of `app` (one of APPS). */
    schemaOf: (app) => schemas[APPS.indexOf(app)],
    databaseUrl,
    metricsUrls,
    pids: Object.fromEntries([...children].map(([app, c]) => [app, c.pid])),
    output: () => logs.join(''),
    /**
     * Starts one more replica of `app` (same schema and bus prefix) named `<app>#<n>`; resolves
     * with `{name, pid, stop()}` once its `/readyz` answers 200 (S8 with 2 run-service replicas).
     */
    async addReplica(app) {
      const name = `${app}#${[...children.keys()].filter((k) => k.startsWith(app)).length + 1}`;
      const child = await spawnApp(app, APPS.indexOf(app), name);
      const readyz = metricsUrls[name].replace(/\/metrics$/, '/readyz');
      const until = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited`);
        const ok = await fetch(readyz)
          .then((r) => r.status === 200)
          .catch(() => false);
        if (ok) break;
        if (Date.now() > until) throw new Error(`${name} not ready after 60 s`);
        await sleep(200);
      }
      return {
        name,
        pid: child.pid,
        stop: async () => {
          await stopChild(child);
          children.delete(name);
        },
      };
    },
    alive: (app) => {
      const c = children.get(app);
      return c !== undefined && c.exitCode === null && c.signalCode === null;
    },
    /** Stops every app; drops the schemas and Redis keys unless `keepData` (a restart with `id` follows). */
    async stop({ keepData = false } = {}) {
      await Promise.all([...children.values()].map((c) => stopChild(c)));
      if (keepData) return;
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
      await deleteRedisKeys(redisUrl, baseEnv.BUS_PREFIX);
    },
  };
  const until = Date.now() + 60_000;
  let last = '';
  while (Date.now() < until) {
    const dead = APPS.find((app) => !stack.alive(app));
    if (dead !== undefined) break;
    try {
      const res = await fetch(`${baseUrl}/api/v1/health`);
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200) return stack;
    } catch (err) {
      last = String(err);
    }
    await sleep(200);
  }
  await stack.stop().catch(() => undefined);
  throw new Error(`the stack did not become healthy (${last})\n${logs.join('').slice(-6000)}`);
}

/** Unlinks every Redis key under `prefix:` (queues, sessions of a stopped stack). */
async function deleteRedisKeys(redisUrl, prefix) {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** POST/GET a REST route of the gateway; resolves with status and parsed body. */
export async function rest(stack, path, { method = 'GET', token, body } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${stack.baseUrl}/api/v1${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

/**
 * Signs in as the bench admin and creates an admin API key for the `mcp` and
 * `rest_api` surfaces (020 §API-Key Surface); resolves with the key.
 */
export async function createApiKey(stack) {
  const login = await rest(stack, '/auth/login', { method: 'POST', body: ADMIN });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  const created = await rest(stack, '/api-keys', {
    method: 'POST',
    token: login.body.token,
    body: { name: 'bench', role: 'admin', surfaces: ['mcp', 'rest_api'] },
  });
  if (created.status !== 201 || typeof created.body?.key !== 'string')
    throw new Error(`api key creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.key;
}

/**
 * Starts the baseline server (bench/lib/baseline-server.mjs) in its own
 * process, serving `results` (DAG name → CallToolResult) from memory.
 */
export async function startBaseline(results, workDir) {
  mkdirSync(workDir, { recursive: true });
  const file = join(workDir, `baseline-results-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(results));
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'lib', 'baseline-server.mjs'), file, '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseline server did not start: ${output}`)), 20_000);
    child.stderr.on('data', (d) => (output += d.toString()));
    child.stdout.on('data', (d) => {
      output += d.toString();
      const m = /LISTENING (\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`baseline server exited ${code}: ${output}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid, stop: () => stopChild(child, 5000) };
}
