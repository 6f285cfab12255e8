/**
 * Mutation outcomes, idempotency keys and the audit outbox under process
 * deaths (issue 18 item 4, issue 17 item 5; docs/decisions.md "Attribution
 * and mutation outcomes"), through the real stack with a 3 s bus deadline:
 * - a service that dies between COMMIT and its reply: the caller gets the
 *   applied result, not "failed";
 * - a mutation no replica took before its deadline: "not applied", truthfully;
 *   with no replica to ask at all: `details.outcome: "unknown"` with the request id;
 * - an idempotency key (REST `Idempotency-Key`, MCP `_meta`): the same key and
 *   payload return the original result, another payload is `conflict`;
 * - an outbox whose drain died: the row stays in the service's schema and
 *   reaches the audit trail once a drain runs again.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Pool } from 'pg';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';
import { toolResult } from './tool-result';

const SPEC = 'steps:\n  - name: a\n    run: echo a\n';
const OTHER_SPEC = 'steps:\n  - name: b\n    run: echo b\n';
let stack: Stack;
let client: Client;
let pool: Pool;

const api = (path: string, init: RestInit = {}): Promise<RestReply> => restCall(stack.baseUrl, path, init);

/** SIGKILL: no graceful shutdown. */
async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Kills every running dag-service replica. */
async function killDagService(): Promise<void> {
  for (const child of stack.processesOf('dag-service')) await killHard(child);
}

/** Waits until the gateway's health says every service answers over the bus. */
async function healthy(): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    const res = await api('/health');
    if (res.status === 200) return;
    if (Date.now() > until) throw new Error(`stack not healthy: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Replaces the dag-service replicas by one started with `env`. */
async function restartDagService(env: Record<string, string> = {}): Promise<ChildProcess> {
  await killDagService();
  const child = await stack.spawnApp('dag-service', env);
  await healthy();
  return child;
}

async function auditRowsFor(action: string, target: string): Promise<Array<Record<string, unknown>>> {
  const res = await api(`/audit?action=${encodeURIComponent(action)}&limit=500`);
  expect(res.status).toBe(200);
  return ((res.body?.items ?? []) as Array<Record<string, unknown>>).filter((row) => row.target === target);
}

const dagSchema = (): string => stack.schemaOf('dag-service');

/** Polls `check` every 150 ms until it holds; fails after 15 s. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met within 15 s');
    await new Promise((r) => setTimeout(r, 150));
  }
}

beforeAll(async () => {
  stack = await startStack({ BUS_TIMEOUT_MS: '3000', AUDIT_DRAIN_MS: '100' });
  client = await connectClient(stack.mcpUrl);
  pool = new Pool({ connectionString: TEST_DATABASE_URL });
}, 90_000);

afterAll(async () => {
  await client?.close();
  await pool?.end();
  await stack?.stop();
});

describe('a caller whose deadline passed learns the truth (issue 18 item 4)', () => {
  test('dag-service dies between COMMIT and its reply: the caller gets the applied result', async () => {
    const hooked = await restartDagService({ TEST_EXIT_AFTER_COMMIT_OP: 'dag.upsert' });
    const exited = new Promise<number | null>((resolve) => hooked.once('exit', (code) => resolve(code)));
    const answer = api('/dags/outcome-applied', { method: 'PUT', body: { spec: SPEC } });
    expect(await exited).toBe(137);
    await stack.spawnApp('dag-service');
    const res = await answer;
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ valid: true, applied: true, created: true, version: 1 });
    expect((await api('/dags/outcome-applied')).status).toBe(200);
    await healthy();
  }, 30_000);

  test('a mutation no replica took before its deadline is answered "not applied", and it never applies', async () => {
    await killDagService();
    const answer = api('/dags/outcome-not-applied', { method: 'PUT', body: { spec: SPEC } });
    await new Promise((r) => setTimeout(r, 3000)); // the bus deadline passes with nobody to take the job
    await stack.spawnApp('dag-service');
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'resource_unavailable',
      details: { outcome: 'not_applied', requestId: expect.any(String) },
    });
    await healthy();
    expect((await api('/dags/outcome-not-applied')).status).toBe(404);
  }, 30_000);

  test('with no replica to ask, the answer is outcome "unknown" with the request id', async () => {
    await killDagService();
    const res = await api('/dags/outcome-unknown', { method: 'PUT', body: { spec: SPEC } });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'resource_unavailable',
      details: { outcome: 'unknown', requestId: res.body?.requestId },
    });
    await stack.spawnApp('dag-service');
    await healthy();
    // Resolved later by that request id (issue 44): nobody took the job before its deadline, so never applied.
    const asked = await api(`/mutations/${String(res.body?.requestId)}`);
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ requestId: res.body?.requestId, outcome: 'not_applied', changes: [] });
    expect((await api('/dags/outcome-unknown')).status).toBe(404);
  }, 30_000);

  test('a change is found by its request id with its recorded reply; a request that changed nothing is not_applied', async () => {
    const requestId = `e2e-outcome-${Date.now()}`;
    const put = await api('/dags/outcome-by-request', {
      method: 'PUT',
      body: { spec: SPEC },
      headers: { 'x-request-id': requestId },
    });
    expect(put.status).toBe(201);
    // The reply is recorded after COMMIT, off the reply path: wait for it.
    await eventually(async () => {
      const asked = await api(`/mutations/${requestId}`);
      const changes = asked.body?.changes as Array<{ result?: unknown }> | undefined;
      return asked.status === 200 && changes?.[0]?.result !== undefined;
    });
    const asked = await api(`/mutations/${requestId}`);
    expect(asked.body).toEqual({
      requestId,
      outcome: 'applied',
      changes: [{ service: 'dag', result: expect.objectContaining({ applied: true, version: 1 }) }],
    });
    expect((await api('/mutations/never-sent-request')).body).toMatchObject({ outcome: 'not_applied' });
    expect((await api('/mutations/bad%20id')).status).toBe(400);
  }, 30_000);
});

describe('idempotency keys (issue 18 item 4)', () => {
  test('REST Idempotency-Key: the same payload returns the original result; another payload is 409', async () => {
    const first = await api('/dags/idem-rest', {
      method: 'PUT',
      body: { spec: SPEC },
      headers: { 'idempotency-key': 'rest-key-1' },
    });
    expect(first.status).toBe(201);
    const again = await api('/dags/idem-rest', {
      method: 'PUT',
      body: { spec: SPEC },
      headers: { 'idempotency-key': 'rest-key-1' },
    });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ ...first.body, requestId: again.body?.requestId });
    expect((await api('/dags/idem-rest')).body).toMatchObject({ version: 1 });
    const other = await api('/dags/idem-rest', {
      method: 'PUT',
      body: { spec: OTHER_SPEC },
      headers: { 'idempotency-key': 'rest-key-1' },
    });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'conflict', field: 'idempotencyKey' });
    const bad = await api('/dags/idem-rest', {
      method: 'PUT',
      body: { spec: SPEC },
      headers: { 'idempotency-key': 'has space' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', field: 'Idempotency-Key' });
    // The row is drained asynchronously: wait for it, then make sure no second one follows.
    await eventually(async () => (await auditRowsFor('dag.upserted', 'dagu://dags/idem-rest/spec')).length > 0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await auditRowsFor('dag.upserted', 'dagu://dags/idem-rest/spec')).toHaveLength(1);
  });

  test('MCP _meta["io.dagu/idempotencyKey"]: a replayed start returns the same run, another payload is conflict', async () => {
    expect((await api('/dags/idem-mcp', { method: 'PUT', body: { spec: SPEC } })).status).toBe(201);
    const call = (params?: string) =>
      client.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'idem-mcp', ...(params !== undefined ? { params } : {}) },
        _meta: { 'io.dagu/idempotencyKey': 'mcp-key-1' },
      });
    const first = toolResult(await call());
    expect(first.isError).toBeFalsy();
    const again = toolResult(await call());
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent?.dagRunId).toBe(first.structuredContent?.dagRunId);
    const runs = await api('/dag-runs?name=idem-mcp');
    expect((runs.body?.items as unknown[]).length).toBe(1);
    const other = toolResult(await call('X=1'));
    expect(other.isError).toBe(true);
    expect(other.structuredContent).toMatchObject({ code: 'conflict' });
  });
});

describe('the audit outbox survives a drain that died (issue 17 item 5)', () => {
  test('a change made while no drain runs stays in the service outbox and reaches the audit trail after a restart', async () => {
    const noDrain = await restartDagService({ AUDIT_DRAIN_MS: '0' });
    expect((await api('/dags/outbox-late', { method: 'PUT', body: { spec: SPEC } })).status).toBe(201);
    const target = 'dagu://dags/outbox-late/spec';
    const outbox = async () =>
      (
        await pool.query<{ action: string; drained: boolean }>(
          `SELECT action, drained FROM "${dagSchema()}".mutation_log WHERE target = $1`,
          [target],
        )
      ).rows;
    expect(await outbox()).toEqual([{ action: 'dag.upserted', drained: false }]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await auditRowsFor('dag.upserted', target)).toHaveLength(0);

    await killHard(noDrain);
    await stack.spawnApp('dag-service');
    await eventually(async () => (await auditRowsFor('dag.upserted', target)).length > 0);
    const rows = await auditRowsFor('dag.upserted', target);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: 'anonymous', credentialType: 'none', outcome: 'succeeded' });
    expect(await outbox()).toEqual([{ action: 'dag.upserted', drained: true }]);
  }, 40_000);
});
