/**
 * Every mutation has an author (issue 17 item 5; docs/security.md
 * "Attribution"): through the real stack (AUTH_MODE=builtin, API keys of
 * each role), every change made over REST and MCP leaves one audit row with
 * its actor and a past-tense action, written by the change's own transaction
 * into the owning service's outbox and drained to the gateway's audit trail;
 * role refusals leave `authz.denied` rows; MCP session ids appear only hashed;
 * the run detail shows `startedBy` and each decided checkpoint's `decision`
 * (dagu-model §5), over REST and `dagu_read`.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let adminToken: string;
const clients: Client[] = [];

const api = (path: string, init: RestInit = {}): Promise<RestReply> => restCall(stack.baseUrl, path, init);

type AuditItem = {
  action: string;
  actor: string;
  principalId: string;
  credentialType: string;
  target?: string;
  requestId?: string;
  outcome: string;
  details?: Record<string, unknown>;
};

async function createKey(name: string, role: string): Promise<string> {
  const res = await api('/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name, role, surfaces: ['mcp', 'rest_api'] },
  });
  expect(res.status).toBe(201);
  return String(res.body?.key);
}

/** The audit rows (newest first, up to 500) matching `filter`. */
async function auditRows(filter: Record<string, string>): Promise<AuditItem[]> {
  const query = new URLSearchParams({ ...filter, limit: '500' }).toString();
  const res = await api(`/audit?${query}`, { token: adminToken });
  expect(res.status).toBe(200);
  return (res.body?.items ?? []) as AuditItem[];
}

/** Polls the audit trail until `count` rows with `action` (and `target`, if given) exist; at most 15 s. */
async function awaitRows(action: string, target?: string, count = 1): Promise<AuditItem[]> {
  const until = Date.now() + 15_000;
  for (;;) {
    const rows = (await auditRows({ action })).filter((row) => target === undefined || row.target === target);
    if (rows.length >= count) return rows;
    if (Date.now() > until) throw new Error(`no ${action} row for ${target ?? 'any target'}: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function runUntil(token: string, name: string, id: string, ok: (run: Record<string, unknown>) => boolean) {
  const until = Date.now() + 20_000;
  for (;;) {
    const run = (await api(`/dag-runs/${name}/${id}`, { token })).body ?? {};
    if (ok(run)) return run;
    if (Date.now() > until) throw new Error(`run ${name}/${id} not as expected: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

function stepOf(run: Record<string, unknown>, name: string): Record<string, unknown> {
  const steps = (run.steps ?? []) as Array<Record<string, unknown>>;
  const step = steps.find((s) => s.name === name);
  if (step === undefined) throw new Error(`no step ${name}`);
  return step;
}

beforeAll(async () => {
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    TOKEN_SECRET: 'attribution-token-secret-0123456789abc',
    AUDIT_DRAIN_MS: '100',
  });
  const res = await api('/auth/login', { method: 'POST', body: ADMIN });
  expect(res.status).toBe(200);
  adminToken = String(res.body?.token);
}, 90_000);

afterAll(async () => {
  for (const client of clients) await client.close();
  await stack?.stop();
});

describe('every change has an author (issue 17 item 5)', () => {
  test('REST changes of DAGs, runs, checkpoints and wiki pages each leave one row with the actor, in past tense', async () => {
    const developer = await createKey('attr-dev', 'developer');
    const operator = await createKey('attr-op', 'operator');
    const spec =
      'steps:\n  - name: gate\n    run: "true"\n    approval: {prompt: Ship it?}\n  - name: after\n    depends: [gate]\n    run: echo after\n';
    expect((await api('/dags/attr-gate', { method: 'PUT', token: developer, body: { spec } })).status).toBe(201);
    expect((await api('/dags/attr-gate/suspend', { method: 'POST', token: developer })).status).toBe(200);
    expect((await api('/dags/attr-gate/resume', { method: 'POST', token: developer })).status).toBe(200);
    const started = await api('/dags/attr-gate/start', { method: 'POST', token: operator, body: {} });
    expect(started.status).toBe(201);
    const id = String(started.body?.dagRunId);
    await runUntil(operator, 'attr-gate', id, (run) => run.status === 7);
    const approved = await api(`/dag-runs/attr-gate/${id}/steps/gate/approval`, {
      method: 'POST',
      token: operator,
      body: { decision: 'approve' },
    });
    expect(approved.status).toBe(200);
    await runUntil(operator, 'attr-gate', id, (run) => run.status === 4);
    expect((await api(`/dag-runs/attr-gate/${id}/retry`, { method: 'POST', token: operator, body: {} })).status).toBe(
      200,
    );
    await runUntil(operator, 'attr-gate', id, (run) => run.status === 7);
    expect((await api(`/dag-runs/attr-gate/${id}/stop`, { method: 'POST', token: operator })).status).toBe(200);
    const page = await api('/wiki/attr/pages/notes', {
      method: 'PUT',
      token: developer,
      body: { content: '# Notes\n' },
    });
    expect(page.status).toBe(201);
    expect((await api('/wiki/attr/pages/notes', { method: 'DELETE', token: developer })).status).toBe(204);
    expect((await api('/dags/attr-gate', { method: 'DELETE', token: developer })).status).toBe(204);

    const dagUri = 'dagu://dags/attr-gate/spec';
    const runUri = `dagu://runs/attr-gate/${id}`;
    const pageUri = 'dagu://wiki/attr/notes';
    const expected: Array<[string, string, string]> = [
      ['dag.upserted', dagUri, 'attr-dev'],
      ['dag.suspended', dagUri, 'attr-dev'],
      ['dag.resumed', dagUri, 'attr-dev'],
      ['run.started', runUri, 'attr-op'],
      ['checkpoint.approval.approved', runUri, 'attr-op'],
      ['run.retried', runUri, 'attr-op'],
      ['run.stopped', runUri, 'attr-op'],
      ['wiki.page.upserted', pageUri, 'attr-dev'],
      ['wiki.page.deleted', pageUri, 'attr-dev'],
      ['dag.deleted', dagUri, 'attr-dev'],
    ];
    for (const [action, target, key] of expected) {
      const rows = await awaitRows(action, target);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        action,
        target,
        actor: `api_key:${key}`,
        credentialType: 'api_key',
        outcome: 'succeeded',
        requestId: expect.any(String),
      });
    }
  });

  test('MCP changes are audited the same way; the session appears only as its hash', async () => {
    const operator = await createKey('attr-mcp-op', 'operator');
    const developer = await createKey('attr-mcp-dev', 'developer');
    const dev = await connectClient(stack.mcpUrl, { authorization: `Bearer ${developer}` });
    const op = await connectClient(stack.mcpUrl, { authorization: `Bearer ${operator}` });
    clients.push(dev, op);
    const applied = toolResult(
      await dev.callTool({
        name: 'dagu_change',
        arguments: {
          mode: 'apply',
          type: 'upsert_dag',
          name: 'attr-mcp',
          spec: 'steps:\n  - name: a\n    run: echo a\n',
        },
      }),
    );
    expect(applied.isError).toBeFalsy();
    const started = toolResult(
      await op.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'attr-mcp' } }),
    );
    expect(started.isError).toBeFalsy();
    const dagRunId = String(started.structuredContent?.dagRunId);

    const [upserted] = await awaitRows('dag.upserted', 'dagu://dags/attr-mcp/spec');
    expect(upserted).toMatchObject({ actor: 'api_key:attr-mcp-dev', credentialType: 'api_key' });
    const [run] = await awaitRows('run.started', `dagu://runs/attr-mcp/${dagRunId}`);
    expect(run).toMatchObject({ actor: 'api_key:attr-mcp-op', credentialType: 'api_key' });

    const sessionId = (dev.transport as StreamableHTTPClientTransport).sessionId ?? '';
    expect(sessionId).not.toBe('');
    // The gateway writes its own rows in batches (every 200 ms): wait for the call's.
    const calls = (await awaitRows('mcp.tool_call.succeeded', 'dagu_change:apply:attr-mcp')).filter(
      (row) => row.actor === 'api_key:attr-mcp-dev',
    );
    expect(calls.length).toBeGreaterThan(0);
    expect(JSON.stringify(await auditRows({}))).not.toContain(sessionId);
    const ref = createHash('sha256').update(sessionId).digest('hex').slice(0, 12);
    expect(calls[0]?.details).toMatchObject({ sessionRef: ref });
  });

  test('role refusals leave authz.denied rows with the role needed and the action attempted (REST and MCP)', async () => {
    const viewer = await createKey('attr-viewer', 'viewer');
    const put = await api('/dags/attr-denied', {
      method: 'PUT',
      token: viewer,
      body: { spec: 'steps:\n  - name: a\n    run: echo a\n' },
    });
    expect(put.status).toBe(403);
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${viewer}` });
    clients.push(client);
    const refused = toolResult(
      await client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'attr-denied' } }),
    );
    expect(refused.structuredContent).toMatchObject({ code: 'unauthorized' });

    const rows = (await awaitRows('authz.denied', undefined, 2)).filter((row) => row.actor === 'api_key:attr-viewer');
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          outcome: 'denied',
          target: 'PUT /api/v1/dags/attr-denied',
          details: expect.objectContaining({ surface: 'rest', role: 'viewer', neededRole: 'developer' }),
        }),
        expect.objectContaining({
          outcome: 'denied',
          target: expect.stringContaining('dagu_execute:start'),
          details: expect.objectContaining({ surface: 'mcp', role: 'viewer', neededRole: 'operator' }),
        }),
      ]),
    );
  });
});

describe('idempotency keys are scoped per principal (issue 18 item 4)', () => {
  test("one caller's key never replays another caller's change", async () => {
    const first = await createKey('attr-idem-1', 'developer');
    const second = await createKey('attr-idem-2', 'developer');
    const put = (token: string) =>
      api('/dags/attr-idem', {
        method: 'PUT',
        token,
        body: { spec: 'steps:\n  - name: a\n    run: echo a\n' },
        headers: { 'idempotency-key': 'shared-key' },
      });
    expect((await put(first)).body).toMatchObject({ version: 1, created: true });
    expect((await put(first)).body).toMatchObject({ version: 1, created: true }); // replayed
    expect((await put(second)).body).toMatchObject({ version: 2, created: false }); // applied anew
    const rows = await awaitRows('dag.upserted', 'dagu://dags/attr-idem/spec', 2);
    expect(rows.map((row) => row.actor).sort()).toEqual(['api_key:attr-idem-1', 'api_key:attr-idem-2']);
  });
});

describe('startedBy and decision in the run detail (dagu-model §5)', () => {
  test('REST and dagu_read show who started a run and who decided its checkpoints', async () => {
    const developer = await createKey('attr-author', 'developer');
    const spec = [
      'steps:',
      '  - id: ask',
      '    action: human.task',
      '    with:',
      '      prompt: Go?',
      '  - id: gate',
      '    depends: [ask]',
      '    run: "true"',
      '    approval: {prompt: Ship?}',
      '',
    ].join('\n');
    expect((await api('/dags/attr-decide', { method: 'PUT', token: developer, body: { spec } })).status).toBe(201);
    const started = await api('/dags/attr-decide/start', { method: 'POST', token: adminToken, body: {} });
    const id = String(started.body?.dagRunId);
    await runUntil(adminToken, 'attr-decide', id, (run) => run.status === 7);
    const answer = await api(`/dag-runs/attr-decide/${id}/steps/ask/human-task`, {
      method: 'POST',
      token: developer,
      body: { values: {} },
    });
    expect(answer.status).toBe(200);
    await runUntil(adminToken, 'attr-decide', id, (run) => run.status === 7 && stepOf(run, 'gate').status === 7);
    expect(
      (
        await api(`/dag-runs/attr-decide/${id}/steps/gate/approval`, {
          method: 'POST',
          token: adminToken,
          body: { decision: 'reject' },
        })
      ).status,
    ).toBe(200);
    const run = await runUntil(adminToken, 'attr-decide', id, (r) => r.status === 8);
    expect(run.startedBy).toEqual({ kind: 'user', name: 'admin' });
    expect(stepOf(run, 'ask').decision).toEqual({
      by: { kind: 'api_key', name: 'api_key:attr-author' },
      at: expect.any(String),
      outcome: 'completed',
    });
    expect(stepOf(run, 'gate').decision).toMatchObject({ by: { kind: 'user', name: 'admin' }, outcome: 'rejected' });

    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${adminToken}` });
    clients.push(client);
    const read = toolResult(
      await client.callTool({ name: 'dagu_read', arguments: { target: 'run', name: 'attr-decide', dagRunId: id } }),
    );
    const data = (read.structuredContent?.data ?? {}) as Record<string, unknown>;
    expect(data.startedBy).toEqual({ kind: 'user', name: 'admin' });
    const steps = (data.steps ?? []) as Array<Record<string, unknown>>;
    expect(steps.find((s) => s.name === 'gate')?.decision).toMatchObject({ outcome: 'rejected' });
  });
});
