/**
 * Every `dagu_change` type through the real stack with the real SDK client
 * (Dagu spec 022b; issue 19 item 1): preview and apply, a conflict and a role
 * case per type, the outputs 022b gives, the flat input schema of every tool,
 * and a DAG rename that survives dag-service dying between its commit and the
 * move of the run history (the outbox, docs/decisions.md "Changes: types, renames and runtime profiles").
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Pool } from 'pg';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const HELLO = 'steps:\n  - name: hello\n    run: echo hello\n';
const SLOW = 'steps:\n  - name: nap\n    run: sleep 30\n';
const PREVIEW_TEXT = 'Change is valid. Re-run with mode=apply to make it.';
const APPLIED_TEXT = 'Change applied.';

let stack: Stack;
let adminToken: string;
let dev: Client;
let viewer: Client;
let pool: Pool;

const api = (path: string, init: RestInit = {}): Promise<RestReply> =>
  restCall(stack.baseUrl, path, { token: adminToken, ...init });

async function createKey(role: string): Promise<string> {
  const res = await api('/api-keys', {
    method: 'POST',
    body: { name: `${role}-${Math.random().toString(36).slice(2, 8)}`, role, surfaces: ['mcp'] },
  });
  expect(res.status).toBe(201);
  return String(res.body?.key);
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return toolResult(await client.callTool({ name, arguments: args }));
}

const change = (args: Record<string, unknown>, client: Client = dev): Promise<CallToolResult> =>
  call(client, 'dagu_change', args);

function sc(result: CallToolResult): Record<string, unknown> {
  return result.structuredContent ?? {};
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** A successful call's structured content; fails the test with the error object otherwise. */
async function ok(args: Record<string, unknown>, client: Client = dev): Promise<Record<string, unknown>> {
  const result = await change(args, client);
  if (result.isError === true) throw new Error(`dagu_change failed: ${JSON.stringify(result.structuredContent)}`);
  return sc(result);
}

/** A failed call's error object; fails the test when the call succeeded. */
async function failed(args: Record<string, unknown>, client: Client = dev): Promise<Record<string, unknown>> {
  const result = await change(args, client);
  if (result.isError !== true) throw new Error(`dagu_change succeeded: ${JSON.stringify(result.structuredContent)}`);
  return sc(result);
}

async function read(args: Record<string, unknown>): Promise<CallToolResult> {
  return call(dev, 'dagu_read', args);
}

/** Run ids of DAG `name`, newest first. */
async function runIdsOf(name: string): Promise<string[]> {
  const result = await read({ target: 'runs', query: `name=${name}&limit=50` });
  const data = sc(result).data as { items?: Array<{ dagRunId: string }> } | undefined;
  return (data?.items ?? []).map((item) => item.dagRunId);
}

async function runToEnd(name: string): Promise<string> {
  const result = await call(dev, 'dagu_execute', { action: 'start', name, wait: true });
  expect(result.isError).toBeFalsy();
  return String(sc(result).dagRunId);
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

beforeAll(async () => {
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    TOKEN_SECRET: 'change-types-token-secret-0123456789',
    BUS_TIMEOUT_MS: '4000',
  });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
  dev = await connectClient(stack.mcpUrl, { authorization: `Bearer ${await createKey('developer')}` });
  viewer = await connectClient(stack.mcpUrl, { authorization: `Bearer ${await createKey('viewer')}` });
  pool = new Pool({ connectionString: TEST_DATABASE_URL });
}, 90_000);

afterAll(async () => {
  await dev?.close();
  await viewer?.close();
  await pool?.end();
  await stack?.stop();
});

describe('the input schemas (022b §Input)', () => {
  test('no tool publishes oneOf/anyOf/allOf at the root; dagu_change is flat with a type enum of eight', async () => {
    const { tools } = await dev.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(3);
    for (const tool of tools) {
      const keys = Object.keys(tool.inputSchema);
      for (const combinator of ['oneOf', 'anyOf', 'allOf']) expect(keys).not.toContain(combinator);
    }
    const schema = tools.find((t) => t.name === 'dagu_change')?.inputSchema;
    expect(Object.keys(schema?.properties ?? {})).toEqual(
      expect.arrayContaining([
        'mode',
        'type',
        'name',
        'spec',
        'newName',
        'profile',
        'workspace',
        'path',
        'content',
        'newPath',
      ]),
    );
    expect((schema?.properties?.type as { enum?: string[] }).enum).toHaveLength(8);
  });
});

describe('wiki change types (022b)', () => {
  const page = { workspace: 'ops', path: 'guides/intro' };
  const pageUri = 'dagu://wiki/ops/guides%2Fintro';

  test('upsert_wiki_page: preview writes nothing, apply creates then updates, bad frontmatter is valid=false', async () => {
    const args = { type: 'upsert_wiki_page', ...page, content: '# Intro\n\nHello.\n' };
    const preview = await change(args);
    expect(textOf(preview)).toBe(PREVIEW_TEXT);
    expect(sc(preview)).toMatchObject({
      mode: 'preview',
      type: 'upsert_wiki_page',
      ...page,
      pageUri,
      valid: true,
      applied: false,
      warnings: [],
    });
    expect((await read({ target: 'wiki_page', ...page })).isError).toBe(true);
    const created = await change({ ...args, mode: 'apply' });
    expect(textOf(created)).toBe(APPLIED_TEXT);
    expect(sc(created)).toMatchObject({ applied: true, created: true, updated: false, pageUri });
    expect(created.content[1]).toMatchObject({ type: 'resource_link', uri: pageUri, name: 'wiki_page' });
    const updated = await ok({ ...args, content: '# Intro\n\nHello again.\n', mode: 'apply' });
    expect(updated).toMatchObject({ applied: true, created: false, updated: true });
    const stored = await read({ target: 'wiki_page', ...page });
    expect(JSON.stringify(sc(stored))).toContain('Hello again.');
    const bad = await ok({ ...args, content: '---\ntitle: [\n---\n# X\n' });
    expect(bad).toMatchObject({ valid: false, applied: false });
    expect((bad.errors as string[])[0]).toMatch(/frontmatter/);
  });

  test('upsert_wiki_page by a viewer: preview warns, apply is unauthorized', async () => {
    const args = { type: 'upsert_wiki_page', ...page, content: '# By a viewer\n' };
    const preview = await ok(args, viewer);
    expect(preview).toMatchObject({ valid: true, applied: false });
    expect((preview.warnings as string[]).join(' ')).toMatch(/developer role/);
    const apply = await failed({ ...args, mode: 'apply' }, viewer);
    expect(apply).toMatchObject({ code: 'unauthorized', mode: 'apply', type: 'upsert_wiki_page', ...page, pageUri });
  });

  test('rename_wiki_page: preview, a taken newPath is conflict, apply moves the page, a viewer cannot', async () => {
    await ok({ type: 'upsert_wiki_page', workspace: 'ops', path: 'other', content: '# Other\n', mode: 'apply' });
    const args = { type: 'rename_wiki_page', ...page, newPath: 'guides/start' };
    const preview = await ok(args);
    expect(preview).toMatchObject({ valid: true, applied: false, ...page, newPath: 'guides/start' });
    const taken = await failed({ ...args, newPath: 'other', mode: 'apply' });
    expect(taken).toMatchObject({ code: 'conflict', field: 'newPath', ...page, pageUri });
    expect(await failed({ ...args, newPath: 'other' })).toMatchObject({ code: 'conflict' });
    expect(await failed({ ...args, mode: 'apply' }, viewer)).toMatchObject({ code: 'unauthorized' });
    const moved = await ok({ ...args, mode: 'apply' });
    expect(moved).toMatchObject({
      applied: true,
      renamed: true,
      workspace: 'ops',
      path: 'guides/start',
      previousPath: 'guides/intro',
      pageUri: 'dagu://wiki/ops/guides%2Fstart',
    });
    expect(sc(await read({ target: 'wiki_page', ...page }))).toMatchObject({ code: 'resource_not_found' });
    expect((await read({ target: 'wiki_page', workspace: 'ops', path: 'guides/start' })).isError).toBeFalsy();
    // The source is gone now: resource_not_found in both modes.
    expect(await failed(args)).toMatchObject({ code: 'resource_not_found', ...page, pageUri });
  });

  test('delete_wiki_page: preview, apply, then resource_not_found; a viewer cannot', async () => {
    const args = { type: 'delete_wiki_page', workspace: 'ops', path: 'other' };
    expect(await ok(args, viewer)).toMatchObject({ valid: true, applied: false });
    expect(await failed({ ...args, mode: 'apply' }, viewer)).toMatchObject({ code: 'unauthorized' });
    const deleted = await change({ ...args, mode: 'apply' });
    expect(textOf(deleted)).toBe(APPLIED_TEXT);
    expect(sc(deleted)).toMatchObject({ applied: true, deleted: true, workspace: 'ops', path: 'other' });
    expect(await failed({ ...args, mode: 'apply' })).toMatchObject({
      code: 'resource_not_found',
      workspace: 'ops',
      path: 'other',
      pageUri: 'dagu://wiki/ops/other',
    });
  });
});

describe('DAG change types (022b)', () => {
  test('upsert_dag by a viewer: preview warns, apply is unauthorized', async () => {
    const preview = await ok({ name: 'viewer-dag', spec: HELLO }, viewer);
    expect(preview).toMatchObject({ valid: true, applied: false });
    expect((preview.warnings as string[]).join(' ')).toMatch(/developer role/);
    expect(await failed({ name: 'viewer-dag', spec: HELLO, mode: 'apply' }, viewer)).toMatchObject({
      code: 'unauthorized',
      dagName: 'viewer-dag',
    });
  });

  test('rename_dag: preview, conflicts, apply moves the definition and its run history; audited as dag.renamed', async () => {
    await ok({ name: 'ren-a', spec: HELLO, mode: 'apply' });
    await ok({ name: 'ren-taken', spec: HELLO, mode: 'apply' });
    const runId = await runToEnd('ren-a');
    const args = { type: 'rename_dag', name: 'ren-a', newName: 'ren-b' };
    const preview = await change(args, viewer);
    expect(textOf(preview)).toBe(PREVIEW_TEXT);
    expect(sc(preview)).toMatchObject({ valid: true, applied: false, dagName: 'ren-a', newName: 'ren-b' });
    expect((sc(preview).warnings as string[]).join(' ')).toMatch(/developer role/);
    expect(await failed({ ...args, mode: 'apply' }, viewer)).toMatchObject({ code: 'unauthorized' });
    expect(await failed({ ...args, newName: 'ren-taken' })).toMatchObject({ code: 'conflict', field: 'newName' });
    expect(await failed({ ...args, newName: 'ren-taken', mode: 'apply' })).toMatchObject({ code: 'conflict' });
    expect(await failed({ ...args, name: 'ren-missing' })).toMatchObject({
      code: 'resource_not_found',
      dagName: 'ren-missing',
    });
    const applied = await change({ ...args, mode: 'apply' });
    expect(textOf(applied)).toBe(APPLIED_TEXT);
    expect(sc(applied)).toMatchObject({
      mode: 'apply',
      type: 'rename_dag',
      dagName: 'ren-b',
      dagUri: 'dagu://dags/ren-b/spec',
      previousName: 'ren-a',
      renamed: true,
      applied: true,
    });
    expect(sc(await read({ target: 'dag_spec', name: 'ren-a' }))).toMatchObject({ code: 'resource_not_found' });
    expect((await read({ target: 'dag_spec', name: 'ren-b' })).isError).toBeFalsy();
    await eventually(async () => (await runIdsOf('ren-b')).includes(runId));
    expect(await runIdsOf('ren-a')).toEqual([]);
    expect((await read({ uri: `dagu://runs/ren-b/${runId}` })).isError).toBeFalsy();
    await eventually(async () => {
      const res = await api('/audit?action=dag.renamed&limit=50');
      const items = (res.body?.items ?? []) as Array<{ target: string; details?: Record<string, unknown> }>;
      return items.some((row) => row.target === 'dagu://dags/ren-b/spec' && row.details?.from === 'ren-a');
    });
  }, 60_000);

  test('rename_dag and delete_dag refuse a DAG with a running run, naming it (conflict)', async () => {
    await ok({ name: 'busy', spec: SLOW, mode: 'apply' });
    const started = await call(dev, 'dagu_execute', { action: 'start', name: 'busy' });
    const runId = String(sc(started).dagRunId);
    await eventually(async () => {
      const detail = sc(await read({ target: 'run', name: 'busy', dagRunId: runId })).data as { statusLabel?: string };
      return detail?.statusLabel === 'running';
    });
    for (const args of [
      { type: 'rename_dag', name: 'busy', newName: 'busy-2' },
      { type: 'rename_dag', name: 'busy', newName: 'busy-2', mode: 'apply' },
      { type: 'delete_dag', name: 'busy', mode: 'apply' },
    ]) {
      const error = await failed(args);
      expect(error).toMatchObject({ code: 'conflict', dagName: 'busy' });
      expect(String(error.message)).toContain(runId);
    }
    await call(dev, 'dagu_execute', { action: 'stop', name: 'busy', dagRunId: runId });
  }, 60_000);

  test('delete_dag: preview, a viewer cannot, apply deletes the definition; its finished runs stay readable', async () => {
    await ok({ name: 'del-me', spec: HELLO, mode: 'apply' });
    const runId = await runToEnd('del-me');
    const args = { type: 'delete_dag', name: 'del-me' };
    expect(await ok(args)).toMatchObject({ valid: true, applied: false, dagName: 'del-me', warnings: [] });
    expect(await failed({ ...args, mode: 'apply' }, viewer)).toMatchObject({ code: 'unauthorized' });
    expect(await ok({ ...args, mode: 'apply' })).toMatchObject({ applied: true, deleted: true, dagName: 'del-me' });
    expect(sc(await read({ target: 'dag', name: 'del-me' }))).toMatchObject({ code: 'resource_not_found' });
    expect((await read({ target: 'run', name: 'del-me', dagRunId: runId })).isError).toBeFalsy();
    expect(await failed({ ...args, mode: 'apply' })).toMatchObject({ code: 'resource_not_found', dagName: 'del-me' });
  }, 60_000);
});

describe('a rename survives dag-service dying midway (022b rename_dag; the outbox)', () => {
  async function killAll(app: 'dag-service'): Promise<void> {
    for (const child of stack.processesOf(app)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }
  }

  const runNames = async (runId: string): Promise<string[]> => {
    const schema = stack.schemaOf('run-service');
    const { rows } = await pool.query<{ dag_name: string }>(
      `SELECT dag_name FROM "${schema}".runs WHERE dag_run_id = $1`,
      [runId],
    );
    return rows.map((row) => row.dag_name);
  };

  test('dag-service exits right after the rename commits: the run history moves once a replica drains the outbox', async () => {
    await ok({ name: 'kill-a', spec: HELLO, mode: 'apply' });
    const runId = await runToEnd('kill-a');
    // A replica that commits the rename and dies before it replies, with its outbox drain off:
    // nothing of the move can have left it.
    await killAll('dag-service');
    const hooked: ChildProcess = await stack.spawnApp('dag-service', {
      TEST_EXIT_AFTER_COMMIT_OP: 'dag.rename',
      AUDIT_DRAIN_MS: '0',
    });
    const exited = new Promise<number | null>((resolve) => hooked.once('exit', (code) => resolve(code)));
    await eventually(async () => (await api('/health')).status === 200);
    const answer = change({ type: 'rename_dag', name: 'kill-a', newName: 'kill-b', mode: 'apply' });
    expect(await exited).toBe(137);
    const dagSchema = stack.schemaOf('dag-service');
    const { rows } = await pool.query<{ name: string }>(
      `SELECT name FROM "${dagSchema}".dags WHERE name LIKE 'kill-%'`,
    );
    expect(rows.map((row) => row.name)).toEqual(['kill-b']);
    expect(await runNames(runId)).toEqual(['kill-a']);
    // A new replica (drain on) takes over: the outbox row reaches run-service.
    await stack.spawnApp('dag-service');
    // The caller learns the truth (docs/decisions.md "Attribution and mutation outcomes"): the
    // applied result when the new replica answers the outcome query in time, else "unknown" —
    // on a loaded machine the replica may still be starting when the gateway asks.
    const result = await answer;
    if (result.isError === true)
      expect(sc(result)).toMatchObject({ code: 'resource_unavailable', details: { outcome: 'unknown' } });
    else expect(sc(result)).toMatchObject({ applied: true, renamed: true, dagName: 'kill-b' });
    await eventually(async () => (await runNames(runId)).join() === 'kill-b');
    expect(await runIdsOf('kill-b')).toContain(runId);
    expect(await runIdsOf('kill-a')).toEqual([]);
  }, 60_000);
});
