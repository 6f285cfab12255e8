/**
 * Published agents end to end (issue 24): per-agent MCP endpoints
 * `/mcp/v1/{workspace}/{agent}` with curated catalogs, agent keys, Dagu tools
 * narrowed per agent, DAGs as tools, hot refresh across two gateway replicas
 * with `notifications/tools/list_changed`, and the fixed error wire forms —
 * through the real SDK client and plain HTTP, as a platform team would use
 * them (docs/agents.md "Publish an agent in five minutes").
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { restCall, type RestInit } from './rest-call';
import { connectClient, startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-24' };
const WS = 'support';

let stack: Stack;
let adminToken = '';
const clients: Client[] = [];

/** REST on replica A (the first gateway), as the admin unless another token is given. */
const api = (path: string, init: RestInit = {}) =>
  restCall(stack.gateways[0]?.url ?? '', path, { token: adminToken, ...init });

/** The agent endpoint URL on replica `replica` (0 = A, 1 = B). */
const endpoint = (agent: string, replica = 0, ws = WS): string =>
  `${stack.gateways[replica]?.url ?? ''}/mcp/v1/${ws}/${agent}`;

async function agentClient(agent: string, key: string, replica = 0): Promise<Client> {
  const client = await connectClient(endpoint(agent, replica), { authorization: `Bearer ${key}` });
  clients.push(client);
  return client;
}

async function newKey(agent: string, name = 'ci'): Promise<{ id: string; key: string }> {
  const res = await api(`/workspaces/${WS}/agents/${agent}/keys`, { method: 'POST', body: { name } });
  expect(res.status).toBe(201);
  return { id: String(res.body?.id), key: String(res.body?.key) };
}

async function putTools(agent: string, tools: unknown[], token = adminToken): Promise<void> {
  const res = await api(`/workspaces/${WS}/agents/${agent}/tools`, { method: 'PUT', body: { tools }, token });
  expect(res.status).toBe(200);
}

async function publishAgent(agent: string, tools: unknown[], token = adminToken): Promise<void> {
  const created = await api(`/workspaces/${WS}/agents`, {
    method: 'POST',
    body: { slug: agent, title: `Agent ${agent}` },
    token,
  });
  expect(created.status).toBe(201);
  await putTools(agent, tools, token);
  const published = await api(`/workspaces/${WS}/agents/${agent}`, {
    method: 'PATCH',
    body: { state: 'published' },
    token,
  });
  expect(published.status).toBe(200);
}

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const structured = (result: CallToolResult): Record<string, unknown> => result.structuredContent ?? {};

/** A raw POST of an `initialize` to an MCP URL with `authorization`: the HTTP status and JSON body. */
async function rawInitialize(
  url: string,
  authorization?: string,
): Promise<{ status: number; body: unknown; challenge: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization !== undefined ? { authorization } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? undefined : (JSON.parse(text) as unknown),
    challenge: res.headers.get('www-authenticate'),
  };
}

const REFUND_DAG = [
  'description: Refunds an order.',
  'labels: [team=billing]',
  'params:',
  '  - name: ORDER',
  '    required: true',
  '    description: The order to refund.',
  '  - name: AMOUNT',
  '    type: integer',
  '    default: 10',
  '    minimum: 1',
  '  - name: MODE',
  '    enum: [full, partial]',
  '    default: full',
  'steps:',
  '  - name: refund',
  '    id: refund',
  '    run: echo "REFUNDED=${ORDER}:${AMOUNT}:${MODE}" >> "$DAGU_OUTPUT_FILE"',
  '    outputs: [REFUNDED]',
  '',
].join('\n');

beforeAll(async () => {
  stack = await startStack(
    {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      // Long: the tests prove that announced changes reach the other replica without waiting for it.
      AGENT_CATALOG_REFRESH_MS: '600000',
    },
    { gatewayReplicas: 2 },
  );
  const login = await restCall(stack.gateways[0]?.url ?? '', '/auth/login', {
    method: 'POST',
    body: ADMIN,
  });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
  for (const [name, spec] of [
    ['refund', REFUND_DAG],
    ['billing-report', 'labels: [team=billing]\nsteps:\n  - name: a\n    run: echo report\n'],
    ['payroll', 'labels: [team=hr]\nsteps:\n  - name: a\n    run: echo payroll\n'],
  ]) {
    const res = await api(`/dags/${name ?? ''}`, { method: 'PUT', body: { spec } });
    expect([200, 201]).toContain(res.status);
  }
  await publishAgent('helpdesk', [
    { kind: 'dag', dag: 'refund', name: 'refund_order', title: 'Refund an order' },
    {
      kind: 'dagu_tool',
      tool: 'dagu_read',
      name: 'read_billing',
      restrictions: { targets: ['dag', 'dag_spec', 'wiki_page'], dagLabels: ['team=billing'], wikiWorkspaces: [WS] },
    },
    { kind: 'dagu_tool', tool: 'dagu_execute', restrictions: { actions: ['start'], dags: ['billing-report'] } },
    { kind: 'dagu_tool', tool: 'dagu_change', restrictions: { changeModes: ['preview'] } },
  ]);
  await publishAgent('other', [{ kind: 'dagu_tool', tool: 'dagu_read' }]);
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.stop();
});

describe('an agent key sees exactly its catalog (issue 24 items 2, 5)', () => {
  test('tools/list: the four bindings, named, titled, annotated; the DAG tool schema from its params', async () => {
    const client = await agentClient('helpdesk', (await newKey('helpdesk')).key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['refund_order', 'read_billing', 'dagu_execute', 'dagu_change']);
    const refund = tools[0];
    expect(refund?.title).toBe('Refund an order');
    expect(refund?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(refund?.inputSchema).toEqual({
      type: 'object',
      properties: {
        ORDER: { type: 'string', description: 'The order to refund.' },
        AMOUNT: { type: 'integer', default: 10, minimum: 1 },
        MODE: { type: 'string', enum: ['full', 'partial'], default: 'full' },
      },
      required: ['ORDER'],
      additionalProperties: false,
    });
    // The published description states the restrictions.
    expect(tools[1]?.description).toContain(
      'Restricted to read targets: dag, dag_spec, wiki_page; DAGs labelled: team=billing',
    );
    expect(tools[2]?.description).toContain('actions: start; DAGs: billing-report');
  });

  test('an unknown tool is JSON-RPC -32602; the platform tools are not there', async () => {
    const client = await agentClient('helpdesk', (await newKey('helpdesk')).key);
    const refused = await client
      .callTool({ name: 'dagu_read', arguments: { target: 'dags' } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
  });
});

describe('a DAG as a tool runs a real DAG (issue 24 item 5)', () => {
  test('returns {dagRunId, status, statusLabel, outputs, runUri}', async () => {
    const client = await agentClient('helpdesk', (await newKey('helpdesk')).key);
    const result = await call(client, 'refund_order', { ORDER: 'A-17', AMOUNT: 25 });
    expect(result.isError).toBeFalsy();
    const out = structured(result);
    expect(out).toMatchObject({
      status: 4,
      statusLabel: 'succeeded',
      completed: true,
      outputs: { refund: { REFUNDED: 'A-17:25:full' } },
    });
    expect(String(out.dagRunId)).not.toBe('');
    expect(out.runUri).toBe(`dagu://runs/refund/${String(out.dagRunId)}`);
    // The run is the agent's: its startedBy names the agent.
    const run = await api(`/dag-runs/refund/${String(out.dagRunId)}`);
    expect(run.body?.startedBy).toEqual({ kind: 'agent', name: `${WS}/helpdesk` });
  });

  test.each([
    [{ AMOUNT: 3 }, 'ORDER'],
    [{ ORDER: 'x', AMOUNT: 'lots' }, 'AMOUNT'],
    [{ ORDER: 'x', MODE: 'double' }, 'MODE'],
    [{ ORDER: 'x', AMOUNT: 0 }, 'AMOUNT'],
    [{ ORDER: 'x', EXTRA: 1 }, 'EXTRA'],
  ])('input %j is invalid_tool_input naming %s', async (args, field) => {
    const client = await agentClient('helpdesk', (await newKey('helpdesk')).key);
    const result = await call(client, 'refund_order', args);
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({ code: 'invalid_tool_input', field });
  });
});

describe('each kind of Dagu-tool restriction holds (issue 24 item 5)', () => {
  let client: Client;
  beforeAll(async () => {
    client = await agentClient('helpdesk', (await newKey('helpdesk')).key);
  });

  const refusedBy = (result: CallToolResult, restriction: string): void => {
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({ code: 'unauthorized', details: { restriction } });
    expect(String(structured(result).message)).toContain(`restriction ${restriction}`);
  };

  test('targets: a read target not listed is refused; a listed one on an allowed DAG works', async () => {
    refusedBy(await call(client, 'read_billing', { target: 'runs' }), 'targets');
    const ok = await call(client, 'read_billing', { target: 'dag', name: 'refund' });
    expect(ok.isError).toBeFalsy();
  });

  test('dagLabels: a DAG without a matching label is refused', async () => {
    refusedBy(await call(client, 'read_billing', { target: 'dag_spec', name: 'payroll' }), 'dagLabels');
    expect((await call(client, 'read_billing', { target: 'dag_spec', name: 'billing-report' })).isError).toBeFalsy();
  });

  test('wikiWorkspaces: another workspace is refused', async () => {
    refusedBy(
      await call(client, 'read_billing', { target: 'wiki_page', workspace: 'hr', path: 'x' }),
      'wikiWorkspaces',
    );
  });

  test('actions and dags: only starting billing-report', async () => {
    refusedBy(
      await call(client, 'dagu_execute', { action: 'stop', name: 'billing-report', dagRunId: 'r1' }),
      'actions',
    );
    refusedBy(await call(client, 'dagu_execute', { action: 'start', name: 'payroll' }), 'dags');
    const started = await call(client, 'dagu_execute', { action: 'start', name: 'billing-report' });
    expect(started.isError).toBeFalsy();
  });

  test('changeModes: preview only', async () => {
    const spec = 'steps:\n  - name: a\n    run: echo hi\n';
    refusedBy(await call(client, 'dagu_change', { mode: 'apply', name: 'sneaky', spec }), 'changeModes');
    const preview = await call(client, 'dagu_change', { mode: 'preview', name: 'sneaky', spec });
    expect(preview.isError).toBeFalsy();
    expect((await api('/dags/sneaky')).status).toBe(404);
  });
});

describe('an agent can never do more than the person who configured it (issue 24 item 4)', () => {
  test("a binding is bounded by its author's role now: a demoted author's execute tool is refused", async () => {
    const user = await api('/users', {
      method: 'POST',
      body: { username: 'morgan', password: 'morgan-password-1', role: 'manager' },
    });
    expect(user.status).toBe(201);
    const login = await restCall(stack.gateways[0]?.url ?? '', '/auth/login', {
      method: 'POST',
      body: { username: 'morgan', password: 'morgan-password-1' },
    });
    const morgan = String(login.body?.token);
    await publishAgent(
      'runner',
      [{ kind: 'dagu_tool', tool: 'dagu_execute', restrictions: { dags: ['billing-report'] } }],
      morgan,
    );
    const client = await agentClient('runner', (await newKey('runner')).key);
    expect((await call(client, 'dagu_execute', { action: 'start', name: 'billing-report' })).isError).toBeFalsy();
    const demoted = await api(`/users/${String(user.body?.id)}`, { method: 'PATCH', body: { role: 'viewer' } });
    expect(demoted.status).toBe(200);
    const refused = await call(client, 'dagu_execute', { action: 'start', name: 'billing-report' });
    expect(refused.isError).toBe(true);
    expect(structured(refused)).toMatchObject({ code: 'unauthorized' });
  });
});

describe("only this agent's keys open its endpoint (issue 24 items 3, 7)", () => {
  test("another agent's key, a user's API key, a login token and Basic are 401 with a challenge", async () => {
    const other = (await newKey('other')).key;
    const apiKey = await api('/api-keys', {
      method: 'POST',
      body: { name: 'user-key', role: 'admin', surfaces: ['mcp', 'rest_api'] },
    });
    expect(apiKey.status).toBe(201);
    const basic = `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}`;
    for (const authorization of [
      undefined,
      `Bearer ${other}`,
      `Bearer ${String(apiKey.body?.key)}`,
      `Bearer ${adminToken}`,
      basic,
    ]) {
      const res = await rawInitialize(endpoint('helpdesk'), authorization);
      expect(res.status).toBe(401);
      expect(res.challenge).toContain('Bearer');
      expect(res.body).toMatchObject({ code: 'unauthenticated' });
    }
  });

  test('an agent key is refused everywhere else: /mcp and REST', async () => {
    const { key } = await newKey('helpdesk');
    expect((await rawInitialize(`${stack.gateways[0]?.url ?? ''}/mcp`, `Bearer ${key}`)).status).toBe(401);
    expect((await restCall(stack.gateways[0]?.url ?? '', '/dags', { token: key })).status).toBe(401);
  });

  test('an unknown workspace or agent, or a draft one, is 404 without saying which', async () => {
    const { key } = await newKey('helpdesk');
    const draft = await api(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug: 'drafty', title: 'Draft' } });
    expect(draft.status).toBe(201);
    for (const url of [endpoint('nobody'), endpoint('helpdesk', 0, 'elsewhere'), endpoint('drafty')]) {
      const res = await rawInitialize(url, `Bearer ${key}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'resource_not_found', message: 'No published agent at this address.' });
    }
  });

  test('a revoked key is refused at once on the other replica', async () => {
    const { id, key } = await newKey('helpdesk', 'short-lived');
    const onB = await agentClient('helpdesk', key, 1);
    expect((await onB.listTools()).tools.length).toBe(4);
    const revoked = await api(`/workspaces/${WS}/agents/helpdesk/keys/${id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(204);
    expect((await rawInitialize(endpoint('helpdesk', 1), `Bearer ${key}`)).status).toBe(401);
    await expect(onB.listTools()).rejects.toThrow();
  });
});

describe('hot refresh across replicas (issue 24 item 6)', () => {
  test('a catalog change on replica A changes tools/list on replica B and sends list_changed to a live session there', async () => {
    const { key } = await newKey('other');
    const onB = await agentClient('other', key, 1);
    expect((await onB.listTools()).tools.map((t) => t.name)).toEqual(['dagu_read']);
    const changed = new Promise<void>((resolve) => {
      onB.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });
    // Give the client's GET stream a moment to open before the change.
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    await putTools('other', [
      { kind: 'dagu_tool', tool: 'dagu_read' },
      { kind: 'dag', dag: 'billing-report', name: 'report' },
    ]);
    await changed;
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(5_000);
    expect((await onB.listTools()).tools.map((t) => t.name)).toEqual(['dagu_read', 'report']);
  });

  test('a tool-name collision is refused with a clear error', async () => {
    const res = await api(`/workspaces/${WS}/agents/other/tools`, {
      method: 'PUT',
      body: {
        tools: [
          { kind: 'dag', dag: 'refund', name: 'dup' },
          { kind: 'dagu_tool', tool: 'dagu_read', name: 'dup' },
        ],
      },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'conflict', field: 'tools[1].name' });
  });

  test('disabling the agent takes its endpoint away on every replica within a second', async () => {
    const { key } = await newKey('other');
    const res = await api(`/workspaces/${WS}/agents/other`, { method: 'PATCH', body: { state: 'disabled' } });
    expect(res.status).toBe(200);
    // Replica A rebuilt before answering; B rebuilds when the announcement reaches it (one pub/sub hop and a bus call).
    expect((await rawInitialize(endpoint('other', 0), `Bearer ${key}`)).status).toBe(404);
    const started = Date.now();
    let status = 0;
    while (Date.now() - started < 1_000) {
      status = (await rawInitialize(endpoint('other', 1), `Bearer ${key}`)).status;
      if (status === 404) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe(404);
  });
});

describe('docs/agents.md "Publish an agent in five minutes" (issue 24 item 4 of the brief: a worked example)', () => {
  test('the curl block publishes an agent whose DAG tool answers with its outputs', async () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'agents.md'), 'utf8');
    const script = /<!-- agent-quickstart -->\n```sh\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(script).toBeDefined();
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script ?? ''], {
      env: { PATH: process.env.PATH ?? '', B: `${stack.gateways[0]?.url ?? ''}/api/v1`, TOKEN: adminToken },
      timeout: 60_000,
    });
    const answer = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(answer).toMatchObject({
      statusLabel: 'succeeded',
      completed: true,
      outputs: { refund: { REFUNDED: 'A-17:25' } },
    });
  });
});

describe('a DAG tool whose run does not finish in time (issue 24 item 5)', () => {
  beforeAll(async () => {
    const review = [
      'steps:',
      '  - id: review',
      '    action: human.task',
      '    with:',
      '      prompt: Approve the refund',
      '      form:',
      '        type: object',
      '        properties:',
      '          ok: {type: boolean}',
      '        required: [ok]',
      '',
    ].join('\n');
    for (const [name, spec] of [
      ['refund-review', review],
      ['slow-refund', 'steps:\n  - name: wait\n    run: sleep 12\n'],
    ]) {
      const res = await api(`/dags/${name ?? ''}`, { method: 'PUT', body: { spec } });
      expect([200, 201]).toContain(res.status);
    }
    await publishAgent('approver', [
      { kind: 'dag', dag: 'refund-review' },
      { kind: 'dag', dag: 'slow-refund', waitSeconds: 7 },
    ]);
  });

  test('a run waiting at a human task says so', async () => {
    const client = await agentClient('approver', (await newKey('approver')).key);
    const result = await call(client, 'refund-review', {});
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toMatchObject({ status: 7, completed: false, waiting: true });
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(text).toContain('human task');
  });

  test('a run still going at the bound answers with its status and runUri, with progress on the way', async () => {
    const client = await agentClient('approver', (await newKey('approver')).key);
    const progress: string[] = [];
    const result = (await client.callTool({ name: 'slow-refund', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(String(p.message)),
      timeout: 30_000,
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const out = structured(result);
    expect(out).toMatchObject({ statusLabel: 'running', completed: false });
    expect(out.waiting).toBeUndefined();
    expect(out.runUri).toBe(`dagu://runs/slow-refund/${String(out.dagRunId)}`);
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });
});
