/**
 * The secrets scan (issue 18): a stack with built-in authentication, a known
 * admin password, token secret and database password is used the way
 * callers use it — a login, a wrong password, an API key created and used
 * over MCP and REST, a bad bearer token, a run with logs — at log level
 * `debug`; then every process's log output and every key and value of its
 * Redis (BullMQ job payloads included) are scanned (secrets-scan.ts).
 * Finding one fails the build.
 */
import { randomBytes } from 'node:crypto';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient } from '../e2e/stack';
import { sleep, startFaultEnv, type FaultEnv } from './fault-env';
import { scanLogs, scanRedis } from './secrets-scan';

const secret = (label: string): string => `${label}-${randomBytes(12).toString('hex')}`;
const PLANTED = {
  adminPassword: secret('admin-pw'),
  wrongPassword: secret('wrong-pw'),
  tokenSecret: secret('token-secret-that-is-long-enough-for-hs256'),
  databasePassword: secret('db-pw'),
  badBearer: secret('bad-bearer'),
};
const planted: Record<string, string> = { ...PLANTED };

let env: FaultEnv;

beforeAll(async () => {
  env = await startFaultEnv({
    env: {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD: PLANTED.adminPassword,
      TOKEN_SECRET: PLANTED.tokenSecret,
      LOG_LEVEL: 'debug',
    },
    databasePassword: PLANTED.databasePassword,
  });
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

async function post(path: string, body: unknown, token?: string): Promise<Response> {
  return fetch(`${env.stack.baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

test('no password, API key, token or DATABASE_URL in any log, Redis key or job payload', async () => {
  const wrong = await post('/auth/login', { username: 'admin', password: PLANTED.wrongPassword });
  expect(wrong.status).toBe(401);
  const login = await post('/auth/login', { username: 'admin', password: PLANTED.adminPassword });
  expect(login.status).toBe(200);
  const loginToken = String(((await login.json()) as { token?: unknown }).token);
  planted.loginToken = loginToken;
  const created = await post('/api-keys', { name: 'scan', role: 'admin', surfaces: ['mcp', 'rest_api'] }, loginToken);
  expect(created.status).toBe(201);
  const apiKey = String(((await created.json()) as { key?: unknown }).key);
  planted.apiKey = apiKey;

  const client = await connectClient(env.stack.mcpUrl, { authorization: `Bearer ${apiKey}` });
  const spec = 'params: WHO=world\nsteps:\n  - name: hello\n    run: echo "hello ${WHO}"\n';
  const applied = await client.callTool({ name: 'dagu_change', arguments: { mode: 'apply', name: 'scan-dag', spec } });
  expect(applied.isError).toBeFalsy();
  const ran = await client.request(
    {
      method: 'tools/call',
      params: { name: 'dagu_execute', arguments: { action: 'start', name: 'scan-dag', wait: true } },
    },
    CallToolResultSchema,
    { timeout: 60_000, onprogress: () => undefined },
  );
  expect(ran.isError).toBeFalsy();
  const dagRunId = String(ran.structuredContent?.dagRunId);
  const logs = await client.callTool({
    name: 'dagu_read',
    arguments: { target: 'run_logs', name: 'scan-dag', dagRunId },
  });
  expect(logs.isError).toBeFalsy();
  await client.close();
  const rest = await fetch(`${env.stack.baseUrl}/api/v1/dags`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(rest.status).toBe(200);
  const denied = await fetch(`${env.stack.baseUrl}/api/v1/dags`, {
    headers: { authorization: `Bearer ${PLANTED.badBearer}` },
  });
  expect(denied.status).toBe(401);
  await sleep(1_000); // the last log lines and audit writes

  const redis = await scanRedis(env.redis.url, planted);
  expect(redis.keys).toBeGreaterThan(0);
  expect(redis.findings).toEqual([]);
  expect(scanLogs(env.stack.output(), planted)).toEqual([]);
});

test('the scan finds what it looks for (it can fail)', () => {
  const text = `[mcp-gateway] {"msg":"x","url":"postgres://app:${PLANTED.databasePassword}@db/x"}`;
  expect(scanLogs(text, planted).map((f) => f.rule)).toEqual(['planted:databasePassword', 'url-with-password']);
});
