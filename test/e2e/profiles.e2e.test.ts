/**
 * Runtime profiles through the real stack (Dagu spec 022b "Runtime
 * profiles", "Profiles: wire details"; issue 19 item 2): created over REST by
 * a manager, secret values stored encrypted (the PostgreSQL row holds no
 * plaintext) and never read back, a DAG's own profile set and cleared with
 * `dagu_change`, the workspace default, `dagu_read` target `dag_profile`,
 * `profile` on `dagu_execute` start, `profile` in the run detail, and secret
 * values masked as `*****` in step logs.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Pool } from 'pg';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const SECRET = 'sup3r-s3cret-t0ken-4711';
const SPEC = 'steps:\n  - name: show\n    run: echo "token=$API_TOKEN region=$REGION"\n';

let stack: Stack;
let adminToken: string;
let operatorKey: string;
let dev: Client;
let operator: Client;
let pool: Pool;

const api = (path: string, init: RestInit = {}): Promise<RestReply> =>
  restCall(stack.baseUrl, path, { token: adminToken, ...init });

async function createKey(role: string, surfaces: string[]): Promise<string> {
  const res = await api('/api-keys', {
    method: 'POST',
    body: { name: `${role}-${Math.random().toString(36).slice(2, 8)}`, role, surfaces },
  });
  expect(res.status).toBe(201);
  return String(res.body?.key);
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return toolResult(await client.callTool({ name, arguments: args }));
}

const sc = (result: CallToolResult): Record<string, unknown> => result.structuredContent ?? {};

async function readData(args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await call(dev, 'dagu_read', args);
  if (result.isError === true) throw new Error(`read failed: ${JSON.stringify(sc(result))}`);
  return (sc(result).data ?? {}) as Record<string, unknown>;
}

/** Starts `prof-dag` and waits for its end; returns the run id. */
async function runIt(extra: Record<string, unknown> = {}): Promise<string> {
  const result = await call(dev, 'dagu_execute', { action: 'start', name: 'prof-dag', wait: true, ...extra });
  if (result.isError === true) throw new Error(`start failed: ${JSON.stringify(sc(result))}`);
  return String(sc(result).dagRunId);
}

async function stepLog(dagRunId: string): Promise<string> {
  return JSON.stringify(await readData({ target: 'step_log', name: 'prof-dag', dagRunId, stepName: 'show' }));
}

beforeAll(async () => {
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    TOKEN_SECRET: 'profiles-token-secret-0123456789abc',
  });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
  operatorKey = await createKey('operator', ['mcp', 'rest_api']);
  dev = await connectClient(stack.mcpUrl, { authorization: `Bearer ${await createKey('developer', ['mcp'])}` });
  operator = await connectClient(stack.mcpUrl, { authorization: `Bearer ${operatorKey}` });
  pool = new Pool({ connectionString: TEST_DATABASE_URL });
  const put = await call(dev, 'dagu_change', { name: 'prof-dag', spec: SPEC, mode: 'apply' });
  expect(put.isError).toBeFalsy();
}, 90_000);

afterAll(async () => {
  await dev?.close();
  await operator?.close();
  await pool?.end();
  await stack?.stop();
});

describe('profiles over REST (022b "Profiles: wire details")', () => {
  test('a manager creates a profile; the secret is stored encrypted and read back by name only', async () => {
    const put = await api('/workspaces/default/profiles/prod', {
      method: 'PUT',
      body: { env: { API_TOKEN: { value: SECRET, secret: true }, REGION: { value: 'eu-west' } } },
    });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({
      name: 'prod',
      workspace: 'default',
      env: { API_TOKEN: { secret: true }, REGION: { value: 'eu-west', secret: false } },
    });
    expect(JSON.stringify(put.body)).not.toContain(SECRET);
    const got = await api('/workspaces/default/profiles/prod');
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(SECRET);
    const list = await api('/workspaces/default/profiles');
    expect(list.body).toMatchObject({
      defaultProfile: null,
      profiles: [{ name: 'prod', variables: expect.arrayContaining([{ name: 'API_TOKEN', secret: true }]) }],
    });
    const schema = stack.schemaOf('run-service');
    const { rows } = await pool.query<{ env: string }>(
      `SELECT env::text AS env FROM "${schema}".profiles WHERE name = 'prod'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.env).not.toContain(SECRET);
    expect(rows[0]?.env).toContain('dsec1.');
  });

  test('an operator may read but not write; forbidden variable names are refused', async () => {
    const asOperator = await restCall(stack.baseUrl, '/workspaces/default/profiles/prod', {
      method: 'PUT',
      token: operatorKey,
      body: { env: { REGION: { value: 'x' } } },
    });
    expect(asOperator.status).toBe(403);
    expect((await restCall(stack.baseUrl, '/workspaces/default/profiles', { token: operatorKey })).status).toBe(200);
    for (const name of ['PATH', 'DAG_NAME', 'LD_PRELOAD', 'DAGU_HOME']) {
      const res = await api('/workspaces/default/profiles/bad', {
        method: 'PUT',
        body: { env: { [name]: { value: 'x' } } },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ field: `env.${name}` });
    }
  });
});

describe('a DAG and its profile (022b)', () => {
  test('set_dag_profile: preview checks the profile exists; apply sets it; dag_profile reads it', async () => {
    expect(await readData({ target: 'dag_profile', name: 'prof-dag' })).toEqual({
      dagName: 'prof-dag',
      configuredProfile: null,
      effectiveProfile: null,
      source: 'none',
    });
    const unknown = await call(dev, 'dagu_change', { type: 'set_dag_profile', name: 'prof-dag', profile: 'nope' });
    expect(unknown.isError).toBe(true);
    expect(sc(unknown)).toMatchObject({ code: 'resource_not_found', field: 'profile', dagName: 'prof-dag' });
    const byOperator = await call(operator, 'dagu_change', {
      type: 'set_dag_profile',
      name: 'prof-dag',
      profile: 'prod',
      mode: 'apply',
    });
    expect(sc(byOperator)).toMatchObject({ code: 'unauthorized' });
    const preview = await call(operator, 'dagu_change', { type: 'set_dag_profile', name: 'prof-dag', profile: 'prod' });
    expect(sc(preview)).toMatchObject({ valid: true, applied: false });
    expect((sc(preview).warnings as string[]).length).toBe(1);
    const applied = await call(dev, 'dagu_change', {
      type: 'set_dag_profile',
      name: 'prof-dag',
      profile: 'prod',
      mode: 'apply',
    });
    expect(sc(applied)).toMatchObject({ applied: true, profile: 'prod', dagName: 'prof-dag' });
    expect(await readData({ target: 'dag_profile', name: 'prof-dag' })).toMatchObject({
      configuredProfile: 'prod',
      effectiveProfile: 'prod',
      source: 'dag',
    });
  });

  test('a run uses the DAG profile: profile in the run detail, the secret masked as ***** in the step log', async () => {
    const runId = await runIt();
    const detail = await readData({ target: 'run', name: 'prof-dag', dagRunId: runId });
    expect(detail).toMatchObject({ profile: 'prod', statusLabel: 'succeeded' });
    const log = await stepLog(runId);
    expect(log).toContain('token=***** region=eu-west');
    expect(log).not.toContain(SECRET);
  }, 60_000);

  test('profile on dagu_execute start overrides the DAG profile; an unknown one is resource_not_found on profile', async () => {
    const staging = await api('/workspaces/default/profiles/staging', {
      method: 'PUT',
      body: { env: { REGION: { value: 'us-east' } } },
    });
    expect(staging.status).toBe(201);
    const runId = await runIt({ profile: 'staging' });
    expect(await readData({ target: 'run', name: 'prof-dag', dagRunId: runId })).toMatchObject({ profile: 'staging' });
    expect(await stepLog(runId)).toContain('token= region=us-east');
    const unknown = await call(dev, 'dagu_execute', { action: 'start', name: 'prof-dag', profile: 'nope' });
    expect(sc(unknown)).toMatchObject({ code: 'resource_not_found', field: 'profile' });
    const onRetry = await call(dev, 'dagu_execute', {
      action: 'retry',
      name: 'prof-dag',
      dagRunId: runId,
      profile: 'prod',
    });
    expect(sc(onRetry)).toMatchObject({ code: 'invalid_tool_input', field: 'profile' });
  }, 60_000);

  test('clear_dag_profile falls back to the workspace default; a secret kept by {secret: true} still runs masked', async () => {
    const cleared = await call(dev, 'dagu_change', { type: 'clear_dag_profile', name: 'prof-dag', mode: 'apply' });
    expect(sc(cleared)).toMatchObject({ applied: true, profile: null });
    expect(await readData({ target: 'dag_profile', name: 'prof-dag' })).toMatchObject({ source: 'none' });
    const setDefault = await api('/workspaces/default/default-profile', { method: 'PUT', body: { profile: 'prod' } });
    expect(setDefault.status).toBe(200);
    expect(await readData({ target: 'dag_profile', name: 'prof-dag' })).toEqual({
      dagName: 'prof-dag',
      configuredProfile: null,
      effectiveProfile: 'prod',
      source: 'workspace',
    });
    const kept = await api('/workspaces/default/profiles/prod', {
      method: 'PUT',
      body: { env: { API_TOKEN: { secret: true }, REGION: { value: 'eu-central' } } },
    });
    expect(kept.status).toBe(200);
    const runId = await runIt();
    expect(await readData({ target: 'run', name: 'prof-dag', dagRunId: runId })).toMatchObject({ profile: 'prod' });
    const log = await stepLog(runId);
    expect(log).toContain('token=***** region=eu-central');
    expect(log).not.toContain(SECRET);
  }, 60_000);

  test('no audit row carries a profile value', async () => {
    const until = Date.now() + 15_000;
    let text = '';
    while (!text.includes('profile.upserted') && Date.now() < until) {
      const res = await api('/audit?limit=500');
      expect(res.status).toBe(200);
      text = JSON.stringify(res.body);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(text).toContain('profile.upserted');
    expect(text).not.toContain(SECRET);
  });
});
