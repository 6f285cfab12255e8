/**
 * REST operations as tools end to end (issue 25): upstreams with encrypted
 * credentials, operations with versions, OpenAPI import, `tools/call` on an
 * agent endpoint through agent-service and the SSRF guard to a real local
 * upstream HTTP server, hot refresh of a published version on another gateway
 * replica, outbound calls to internal addresses only inside the stack's
 * `OUTBOUND_ALLOW_CIDRS=127.0.0.1/32` (issue 42 item 1), and usage per tool — the real stack, the SDK client on the agent
 * endpoint, plain HTTP for the REST API (docs/agents.md "REST operations").
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Pool } from 'pg';
import { restCall, type RestInit } from './rest-call';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-25' };
const WS = 'billing';
const AGENT = 'refunds-bot';
const SECRET = 'upstream-secret-7f3c9a';

let stack: Stack;
let adminToken = '';
let agentKey = '';
const clients: Client[] = [];

/** What the upstream received, in order. */
const received: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
let otherHits = 0;
let upstream: Server;
let other: Server;
let upstreamPort = 0;
let otherBase = '';
const timers: NodeJS.Timeout[] = [];
/**
 * An "internal" server on every interface: 127.0.0.2, 0.0.0.0 and ::ffff:127.0.0.2 all reach it,
 * so a guard that let one of them through would show here as a hit (issue 42 item 1).
 */
let internal: Server;
let internalPort = 0;
let internalHits = 0;
const INTERNAL_BODY = 'internal-only-body-4d1e';
const SSRF_AGENT = 'ssrf-bot';
let ssrfKey = '';

const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
};

/** The upstream's routes, under `/api` (the upstream's base path). */
function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url ?? '/', 'http://upstream');
  const path = url.pathname;
  const refund = /^\/api\/refunds\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && refund !== null)
    return json(res, 200, {
      id: decodeURIComponent(refund[1] ?? ''),
      expand: url.searchParams.get('expand'),
      currency: url.searchParams.get('currency'),
      trace: req.headers['x-trace'] ?? null,
    });
  if (req.method === 'POST' && path === '/api/refunds') return json(res, 201, { created: JSON.parse(body) as unknown });
  const order = /^\/api\/orders\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && order !== null) return json(res, 200, { orderId: order[1], status: 'shipped' });
  if (req.method === 'POST' && path === '/api/orders') return json(res, 201, { order: JSON.parse(body) as unknown });
  if (path === '/api/missing') return json(res, 404, { error: 'no such refund' });
  if (path === '/api/boom') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('e'.repeat(10_000));
  if (path === '/api/slow') return void timers.push(setTimeout(() => json(res, 200, { late: true }), 3_000));
  if (path === '/api/huge') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(`[${'"x",'.repeat(500_000)}"x"]`);
  }
  if (path === '/api/away') return void res.writeHead(302, { location: `${otherBase}/stolen` }).end();
  json(res, 404, { error: 'no route' });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** REST on replica A, as the admin. */
const api = (path: string, init: RestInit = {}) =>
  restCall(stack.gateways[0]?.url ?? '', path, { token: adminToken, ...init });

const endpoint = (replica: number): string => `${stack.gateways[replica]?.url ?? ''}/mcp/v1/${WS}/${AGENT}`;

async function agentClient(replica = 0): Promise<Client> {
  const client = await connectClient(endpoint(replica), { authorization: `Bearer ${agentKey}` });
  clients.push(client);
  return client;
}

/** Calls made per tool through the agent endpoint, and how many were errors: what usage must report. */
const made = new Map<string, { calls: number; errors: number }>();

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const seen = made.get(name) ?? { calls: 0, errors: 0 };
  made.set(name, { calls: seen.calls + 1, errors: seen.errors + (result.isError === true ? 1 : 0) });
  return result;
}

const sc = (result: CallToolResult): Record<string, unknown> => result.structuredContent ?? {};

const spec = (over: Record<string, unknown>) => ({
  upstream: 'billing-api',
  method: 'GET',
  inputSchema: { type: 'object', properties: {} },
  ...over,
});

async function createAndPublish(name: string, body: Record<string, unknown>): Promise<void> {
  const created = await api(`/workspaces/${WS}/operations`, { method: 'POST', body: { name, ...body } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name, latestVersion: 1, publishedVersion: null });
  const published = await api(`/workspaces/${WS}/operations/${name}/versions/1/publish`, { method: 'POST' });
  expect(published.status).toBe(200);
  expect(published.body).toMatchObject({ publishedVersion: 1 });
}

const GET_REFUND = {
  upstream: 'billing-api',
  method: 'GET',
  pathTemplate: '/refunds/{id}',
  arguments: { id: { in: 'path' }, expand: { in: 'query' }, trace: { in: 'header', name: 'X-Trace' } },
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The refund id.' },
      expand: { type: 'string' },
      trace: { type: 'string' },
    },
    required: ['id'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
};

/**
 * Upstreams at internal addresses, one operation and tool each on the `ssrf-bot` agent (its own
 * agent, so the refunds bot's tool list and usage stay as they are): base URLs in the spellings
 * of issue 42's attack, each with no `allowHosts` unless given (issue 42 item 1).
 */
const SSRF_CASES = (): ReadonlyArray<{ tool: string; baseUrl: string; allowHosts?: string[] }> => [
  { tool: 'loopback', baseUrl: `http://127.0.0.1:${internalPort}` },
  { tool: 'loopback_decimal', baseUrl: `http://2130706433:${internalPort}` },
  { tool: 'loopback_mapped', baseUrl: `http://[::ffff:127.0.0.1]:${internalPort}` },
  { tool: 'other_plain', baseUrl: `http://127.0.0.2:${internalPort}` },
  { tool: 'other_decimal', baseUrl: `http://2130706434:${internalPort}` },
  { tool: 'other_hex', baseUrl: `http://0x7f000002:${internalPort}` },
  { tool: 'other_short', baseUrl: `http://127.2:${internalPort}` },
  { tool: 'other_mapped', baseUrl: `http://[::ffff:127.0.0.2]:${internalPort}` },
  { tool: 'unspecified', baseUrl: `http://0.0.0.0:${internalPort}` },
  { tool: 'metadata', baseUrl: 'http://169.254.169.254' },
  { tool: 'metadata_v6', baseUrl: 'http://[fd00:ec2::254]' },
  { tool: 'private_ten', baseUrl: 'http://10.0.0.1' },
  { tool: 'listed_ip', baseUrl: `http://127.0.0.2:${internalPort}`, allowHosts: ['127.0.0.2'] },
  { tool: 'listed_range', baseUrl: `http://127.0.0.2:${internalPort}`, allowHosts: ['127.0.0.0/8'] },
];

/** Creates the SSRF cases' upstreams, operations and the published `ssrf-bot` agent; returns its key. */
async function ssrfSetup(): Promise<string> {
  for (const { tool, baseUrl, allowHosts } of SSRF_CASES()) {
    const name = `ssrf-${tool.replace(/_/g, '-')}`;
    // A short bound: the old guard let 169.254.169.254 and 10.0.0.1 through to a connect that hangs.
    const body = { baseUrl, timeoutMs: 1000, ...(allowHosts !== undefined ? { allowHosts } : {}) };
    expect((await api(`/workspaces/${WS}/upstreams/${name}`, { method: 'PUT', body })).status).toBe(201);
    await createAndPublish(tool, { spec: spec({ upstream: name, pathTemplate: '/probe' }) });
  }
  const agent = `/workspaces/${WS}/agents/${SSRF_AGENT}`;
  expect(
    (await api(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug: SSRF_AGENT, title: 'SSRF' } })).status,
  ).toBe(201);
  const tools = SSRF_CASES().map(({ tool }) => ({ kind: 'rest_operation', operation: tool }));
  expect((await api(`${agent}/tools`, { method: 'PUT', body: { tools } })).status).toBe(200);
  expect((await api(agent, { method: 'PATCH', body: { state: 'published' } })).status).toBe(200);
  const key = await api(`${agent}/keys`, { method: 'POST', body: { name: 'ci' } });
  expect(key.status).toBe(201);
  return String(key.body?.key);
}

/** One `tools/call` of an SSRF case through the real agent path (gateway → agent-service → guard). */
async function ssrfCall(tool: string): Promise<CallToolResult> {
  const url = `${stack.gateways[0]?.url ?? ''}/mcp/v1/${WS}/${SSRF_AGENT}`;
  const client = await connectClient(url, { authorization: `Bearer ${ssrfKey}` });
  clients.push(client);
  return (await client.callTool({ name: tool, arguments: {} })) as CallToolResult;
}

/** Expects `tool` refused by the address guard naming `address` and `rule`, and nothing sent to the internal server. */
async function expectRefused(tool: string, address: string, rule: string, shown = address): Promise<void> {
  const hits = internalHits;
  const result = await ssrfCall(tool);
  expect([tool, result.isError]).toEqual([tool, true]);
  expect(sc(result)).toMatchObject({
    code: 'resource_unavailable',
    message: `${tool}: The upstream address is refused: ${shown} is ${rule} and not in OUTBOUND_ALLOW_CIDRS.`,
    details: { operation: tool, kind: 'address_refused', attempts: 1, address, rule },
  });
  expect(JSON.stringify(result)).not.toContain(INTERNAL_BODY);
  expect([tool, internalHits]).toEqual([tool, hits]);
}

let started: Date;

beforeAll(async () => {
  started = new Date(Date.now() - 1000);
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      route(req, res, body);
    });
  });
  other = createServer((_req, res) => {
    otherHits++;
    res.writeHead(200).end('other host');
  });
  upstreamPort = await listen(upstream);
  otherBase = `http://127.0.0.1:${await listen(other)}`;
  internal = createServer((_req, res) => {
    internalHits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(INTERNAL_BODY);
  });
  internalPort = await new Promise<number>((resolve) =>
    internal.listen(0, '0.0.0.0', () => resolve((internal.address() as AddressInfo).port)),
  );

  stack = await startStack(
    {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      AGENT_CATALOG_REFRESH_MS: '600000',
    },
    { gatewayReplicas: 2 },
  );
  const login = await restCall(stack.gateways[0]?.url ?? '', '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);

  // The local upstream is on loopback: reached because the stack's OUTBOUND_ALLOW_CIDRS is 127.0.0.1/32 (issue 42).
  const put = await api(`/workspaces/${WS}/upstreams/billing-api`, {
    method: 'PUT',
    body: {
      baseUrl: `http://127.0.0.1:${upstreamPort}/api`,
      allowHosts: ['127.0.0.1'],
      credential: { type: 'bearer', token: SECRET },
      defaultHeaders: { 'x-client': 'dagu' },
      timeoutMs: 5000,
    },
  });
  expect(put.status).toBe(201);
  // Loopback outside OUTBOUND_ALLOW_CIDRS, though the upstream's allow-list names it (issue 42 item 1).
  const outside = await api(`/workspaces/${WS}/upstreams/outside-cidrs`, {
    method: 'PUT',
    body: { baseUrl: `http://127.0.0.2:${internalPort}/api`, allowHosts: ['127.0.0.2'], timeoutMs: 1000 },
  });
  expect(outside.status).toBe(201);

  await createAndPublish('get_refund', { title: 'Get a refund', spec: GET_REFUND });
  await createAndPublish('create_refund', {
    spec: spec({
      method: 'POST',
      pathTemplate: '/refunds',
      arguments: { order: { in: 'body' }, amount: { in: 'body' } },
      inputSchema: {
        type: 'object',
        properties: { order: { type: 'string' }, amount: { type: 'integer', minimum: 1 } },
        required: ['order', 'amount'],
      },
    }),
  });
  for (const [name, path, extra] of [
    ['missing', '/missing', {}],
    ['boom', '/boom', {}],
    ['slow', '/slow', { timeoutMs: 300 }],
    ['huge', '/huge', { responseMaxBytes: 65_536 }],
    ['away', '/away', {}],
  ] as const)
    await createAndPublish(name, { spec: spec({ pathTemplate: path, ...extra }) });
  await createAndPublish('private_get', { spec: spec({ upstream: 'outside-cidrs', pathTemplate: '/refunds/x' }) });
  // A draft: never published.
  const draft = await api(`/workspaces/${WS}/operations`, {
    method: 'POST',
    body: { name: 'draft_only', spec: spec({ pathTemplate: '/refunds/draft' }) },
  });
  expect(draft.status).toBe(201);

  const names = ['get_refund', 'create_refund', 'missing', 'boom', 'slow', 'huge', 'away', 'private_get', 'draft_only'];
  expect(
    (await api(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug: AGENT, title: 'Refunds bot' } })).status,
  ).toBe(201);
  const tools = [
    ...names.map((operation) => ({ kind: 'rest_operation', operation })),
    { kind: 'rest_operation', operation: 'get_refund', version: 1, name: 'get_refund_v1' },
  ];
  expect((await api(`/workspaces/${WS}/agents/${AGENT}/tools`, { method: 'PUT', body: { tools } })).status).toBe(200);
  expect(
    (await api(`/workspaces/${WS}/agents/${AGENT}`, { method: 'PATCH', body: { state: 'published' } })).status,
  ).toBe(200);
  const key = await api(`/workspaces/${WS}/agents/${AGENT}/keys`, { method: 'POST', body: { name: 'ci' } });
  expect(key.status).toBe(201);
  agentKey = String(key.body?.key);
  ssrfKey = await ssrfSetup();
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.stop();
  for (const timer of timers) clearTimeout(timer);
  upstream?.closeAllConnections();
  other?.closeAllConnections();
  internal?.closeAllConnections();
  await Promise.all([
    new Promise((resolve) => upstream?.close(resolve)),
    new Promise((resolve) => other?.close(resolve)),
    new Promise((resolve) => internal?.close(resolve)),
  ]);
});

describe('upstreams keep their credential to themselves (issue 25 item 1)', () => {
  test('no read returns the credential; the database holds only a ciphertext; the audit trail never sees it', async () => {
    const one = await api(`/workspaces/${WS}/upstreams/billing-api`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ credential: { type: 'bearer' }, allowHosts: ['127.0.0.1'] });
    const list = await api(`/workspaces/${WS}/upstreams`);
    expect(JSON.stringify(list.body)).toContain('billing-api');
    for (const body of [one.body, list.body]) expect(JSON.stringify(body)).not.toContain(SECRET);

    const pool = new Pool({ connectionString: TEST_DATABASE_URL });
    try {
      const schema = stack.schemaOf('agent-service');
      const { rows } = await pool.query<{ credential: string }>(
        `SELECT credential FROM "${schema}".upstreams WHERE name = 'billing-api'`,
      );
      expect(rows[0]?.credential).toMatch(/^dsec1\./);
      const leaks = await pool.query(
        `SELECT 1 FROM "${schema}".upstreams WHERE row_to_json(upstreams)::text LIKE $1
         UNION ALL SELECT 1 FROM "${schema}".mutation_log WHERE row_to_json(mutation_log)::text LIKE $1`,
        [`%${SECRET}%`],
      );
      expect(leaks.rowCount).toBe(0);
    } finally {
      await pool.end();
    }
  });

  test('replacing an upstream without a credential keeps the stored one', async () => {
    const again = await api(`/workspaces/${WS}/upstreams/billing-api`, {
      method: 'PUT',
      body: {
        baseUrl: `http://127.0.0.1:${upstreamPort}/api`,
        allowHosts: ['127.0.0.1'],
        defaultHeaders: { 'x-client': 'dagu' },
      },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ credential: { type: 'bearer' }, version: 2 });
  });
});

describe('tools/list shows published versions only (issue 25 item 2)', () => {
  test('the REST tools with their input schemas and annotations; the draft is not there', async () => {
    const client = await agentClient();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'get_refund',
      'create_refund',
      'missing',
      'boom',
      'slow',
      'huge',
      'away',
      'private_get',
      'get_refund_v1',
    ]);
    const get = tools[0];
    expect(get?.title).toBe('Get a refund');
    expect(get?.inputSchema).toEqual(GET_REFUND.inputSchema);
    expect(get?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    // A draft is not callable either.
    const refused = await client.callTool({ name: 'draft_only', arguments: {} }).catch((e: unknown) => e);
    expect(String(refused)).toContain('Unknown tool: draft_only');
  });
});

describe('tools/call reaches the upstream with its credential (issue 25 item 4)', () => {
  test('path, query and header arguments; the credential and default headers are ours, not the caller’s', async () => {
    const client = await agentClient();
    const before = received.length;
    const result = await call(client, 'get_refund', { id: 'R 1', expand: 'items', trace: 't-9' });
    expect(result.isError).toBeFalsy();
    expect(sc(result)).toMatchObject({
      operation: 'get_refund',
      status: 200,
      truncated: false,
      body: { id: 'R 1', expand: 'items', trace: 't-9' },
    });
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('HTTP 200') as unknown });
    const got = received[before];
    expect(got?.url).toBe('/api/refunds/R%201?expand=items');
    expect(got?.headers).toMatchObject({ authorization: `Bearer ${SECRET}`, 'x-client': 'dagu', 'x-trace': 't-9' });
    expect(JSON.stringify(got?.headers)).not.toContain(agentKey);
  });

  test('body arguments become one JSON object', async () => {
    const client = await agentClient();
    const result = await call(client, 'create_refund', { order: 'A-17', amount: 25 });
    expect(sc(result)).toMatchObject({ status: 201, body: { created: { order: 'A-17', amount: 25 } } });
    expect(received.at(-1)?.headers['content-type']).toBe('application/json');
  });

  test('bad input is invalid_tool_input naming the field; nothing is sent', async () => {
    const client = await agentClient();
    const before = received.length;
    const result = await call(client, 'create_refund', { order: 'A-17', amount: 0 });
    expect(result.isError).toBe(true);
    expect(sc(result)).toMatchObject({ code: 'invalid_tool_input', field: 'amount' });
    expect(received.length).toBe(before);
  });

  test('a path argument with ../ (or ..) is refused before any request', async () => {
    const client = await agentClient();
    const before = received.length;
    for (const id of ['../admin', '..', 'a/b']) {
      const result = await call(client, 'get_refund', { id });
      expect(result.isError).toBe(true);
      expect(sc(result)).toMatchObject({
        code: 'invalid_tool_input',
        field: 'id',
        details: { operation: 'get_refund' },
      });
    }
    expect(received.length).toBe(before);
  });
});

describe('upstream errors and refusals have fixed wire forms (issue 25 items 5, 6)', () => {
  test('4xx and 5xx: isError with the status and a trimmed body', async () => {
    const client = await agentClient();
    const missing = await call(client, 'missing', {});
    expect(missing.isError).toBe(true);
    expect(sc(missing)).toMatchObject({ status: 404, message: 'The upstream answered HTTP 404.' });
    // The upstream's JSON error body comes back as JSON, not as a string (issue 53 item 6).
    expect(sc(missing).body).toEqual({ error: 'no such refund' });
    const boom = await call(client, 'boom', {});
    expect(sc(boom)).toMatchObject({ status: 500, truncated: true });
    expect(String(sc(boom).body)).toHaveLength(2000);
  });

  test('a slow upstream is a named timeout', async () => {
    const client = await agentClient();
    const slow = await call(client, 'slow', {});
    expect(slow.isError).toBe(true);
    expect(sc(slow)).toMatchObject({ code: 'resource_unavailable', details: { operation: 'slow', kind: 'timeout' } });
  });

  test('a huge body is cut at the cap with truncated: true and a marker', async () => {
    const client = await agentClient();
    const huge = await call(client, 'huge', {});
    expect(huge.isError).toBeFalsy();
    expect(sc(huge)).toMatchObject({ status: 200, truncated: true });
    expect(Buffer.byteLength(String(sc(huge).body))).toBeLessThanOrEqual(65_536);
    expect(huge.content[0]).toMatchObject({ text: expect.stringContaining('[truncated]') as unknown });
  });

  test('a redirect to another host is refused and not followed', async () => {
    const client = await agentClient();
    const hits = otherHits;
    const away = await call(client, 'away', {});
    expect(away.isError).toBe(true);
    expect(sc(away)).toMatchObject({ code: 'resource_unavailable', details: { kind: 'redirect_refused' } });
    expect(otherHits).toBe(hits);
  });

  test('a loopback address outside OUTBOUND_ALLOW_CIDRS is refused before any request, though allowHosts names it', async () => {
    const client = await agentClient();
    const [before, hits] = [received.length, internalHits];
    const refused = await call(client, 'private_get', {});
    expect(refused.isError).toBe(true);
    expect(sc(refused)).toMatchObject({
      code: 'resource_unavailable',
      message: 'private_get: The upstream address is refused: 127.0.0.2 is loopback and not in OUTBOUND_ALLOW_CIDRS.',
      details: { kind: 'address_refused', address: '127.0.0.2', rule: 'loopback' },
    });
    expect(JSON.stringify(refused)).not.toContain(SECRET);
    expect([received.length, internalHits]).toEqual([before, hits]);
  });
});

describe('outbound calls reach internal addresses only inside OUTBOUND_ALLOW_CIDRS (issue 42 item 1)', () => {
  test('127.0.0.1 in any spelling is reached (the stack allows 127.0.0.1/32); 127.0.0.2 in every spelling is refused', async () => {
    // Inside the range: an upstream on 127.0.0.1 still works, also written as a number or IPv4-mapped
    // (a mapped address is matched as its IPv4 form).
    for (const tool of ['loopback', 'loopback_decimal', 'loopback_mapped']) {
      const hits = internalHits;
      const reached = await ssrfCall(tool);
      expect([tool, reached.isError ?? false, sc(reached).status, sc(reached).body]).toEqual([
        tool,
        false,
        200,
        INTERNAL_BODY,
      ]);
      expect(internalHits).toBe(hits + 1);
    }
    // Outside it (WHATWG URL normalises 2130706434, 0x7f000002 and 127.2 to 127.0.0.2).
    for (const tool of ['other_plain', 'other_decimal', 'other_hex', 'other_short'])
      await expectRefused(tool, '127.0.0.2', 'loopback');
    await expectRefused('other_mapped', '::ffff:7f00:2', 'loopback', '::ffff:7f00:2 (127.0.0.2)');
  });

  test('the unspecified address, cloud metadata (IPv4 and IPv6) and a private address are refused by name', async () => {
    await expectRefused('unspecified', '0.0.0.0', 'unspecified');
    await expectRefused('metadata', '169.254.169.254', 'link-local');
    await expectRefused('metadata_v6', 'fd00:ec2::254', 'unique-local');
    await expectRefused('private_ten', '10.0.0.1', 'private');
  });

  test('an allowHosts entry naming an address or range outside the CIDRs opens nothing', async () => {
    await expectRefused('listed_ip', '127.0.0.2', 'loopback');
    await expectRefused('listed_range', '127.0.0.2', 'loopback');
    // An IP-literal base URL is no longer its own allow-list entry.
    const read = await api(`/workspaces/${WS}/upstreams/ssrf-metadata`);
    expect(read.body).toMatchObject({ baseUrl: 'http://169.254.169.254', allowHosts: [] });
  });
});

describe('versions (issue 25 item 2)', () => {
  test('publishing a new version changes tools/list on another replica, with list_changed; a pinned binding stays', async () => {
    const onB = await agentClient(1);
    const before = await onB.listTools();
    expect(before.tools.find((t) => t.name === 'get_refund')?.inputSchema.properties).not.toHaveProperty('currency');
    const changed = new Promise<void>((resolve) => {
      onB.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });
    await new Promise((r) => setTimeout(r, 500));
    const v2 = {
      ...GET_REFUND,
      arguments: { ...GET_REFUND.arguments, currency: { in: 'query' } },
      inputSchema: {
        ...GET_REFUND.inputSchema,
        properties: { ...GET_REFUND.inputSchema.properties, currency: { type: 'string', enum: ['EUR', 'USD'] } },
      },
    };
    const drafted = await api(`/workspaces/${WS}/operations/get_refund/versions`, {
      method: 'POST',
      body: { spec: v2 },
    });
    expect(drafted.status).toBe(201);
    expect(drafted.body).toMatchObject({ latestVersion: 2, publishedVersion: 1 });
    // A draft changes nothing an agent sees.
    expect((await onB.listTools()).tools.find((t) => t.name === 'get_refund')?.inputSchema).toEqual(
      GET_REFUND.inputSchema,
    );
    const published = await api(`/workspaces/${WS}/operations/get_refund/versions/2/publish`, { method: 'POST' });
    expect(published.status).toBe(200);
    await changed;
    const after = await onB.listTools();
    expect(after.tools.find((t) => t.name === 'get_refund')?.inputSchema.properties).toHaveProperty('currency');
    expect(after.tools.find((t) => t.name === 'get_refund_v1')?.inputSchema).toEqual(GET_REFUND.inputSchema);
    const result = await call(onB, 'get_refund', { id: 'R-2', currency: 'EUR' });
    expect(sc(result)).toMatchObject({ status: 200, version: 2, body: { id: 'R-2', currency: 'EUR' } });
    const pinned = await call(onB, 'get_refund_v1', { id: 'R-2', currency: 'EUR' });
    expect(sc(pinned)).toMatchObject({ code: 'invalid_tool_input', field: 'currency' });
  });

  test('a published version never changes: PATCH of its spec is a conflict', async () => {
    const res = await api(`/workspaces/${WS}/operations/get_refund`, { method: 'PATCH', body: { spec: GET_REFUND } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'conflict', field: 'spec' });
  });
});

describe('OpenAPI import (issue 25 item 3)', () => {
  test('an imported document becomes drafts that, once published and bound, are working tools', async () => {
    const document = {
      openapi: '3.1.0',
      info: { title: 'Orders', version: '1' },
      paths: {
        '/orders/{orderId}': {
          get: {
            operationId: 'getOrder',
            summary: 'Get an order',
            parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
          },
        },
        '/orders': {
          post: {
            operationId: 'createOrder',
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/NewOrder' } } },
            },
          },
        },
        '/upload': {
          post: { operationId: 'upload', requestBody: { required: true, content: { 'text/csv': {} } } },
        },
      },
      components: {
        schemas: {
          NewOrder: {
            type: 'object',
            properties: { sku: { type: 'string' }, qty: { type: 'integer' } },
            required: ['sku'],
          },
        },
      },
    };
    const imported = await api(`/workspaces/${WS}/operations/import`, {
      method: 'POST',
      body: { upstream: 'billing-api', document },
    });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({
      created: [{ name: 'getOrder' }, { name: 'createOrder' }],
      refused: [{ operation: 'upload', reason: 'the request body is not JSON' }],
      skipped: [],
    });
    const op = await api(`/workspaces/${WS}/operations/createOrder`);
    expect(op.body).toMatchObject({ publishedVersion: null, versions: [{ version: 1, state: 'draft' }] });
    for (const name of ['getOrder', 'createOrder'])
      expect((await api(`/workspaces/${WS}/operations/${name}/versions/1/publish`, { method: 'POST' })).status).toBe(
        200,
      );
    const current = await api(`/workspaces/${WS}/agents/${AGENT}/tools`);
    const bindings = (current.body?.tools as Array<Record<string, unknown>>).map(
      ({ toolName: _t, createdBy: _c, createdAt: _a, ...binding }) => binding,
    );
    const put = await api(`/workspaces/${WS}/agents/${AGENT}/tools`, {
      method: 'PUT',
      body: {
        tools: [
          ...bindings,
          { kind: 'rest_operation', operation: 'getOrder' },
          { kind: 'rest_operation', operation: 'createOrder' },
        ],
      },
    });
    expect(put.status).toBe(200);
    const client = await agentClient();
    const get = await call(client, 'getOrder', { orderId: 'O-5' });
    expect(sc(get)).toMatchObject({ status: 200, body: { orderId: 'O-5', status: 'shipped' } });
    const created = await call(client, 'createOrder', { sku: 'S-1', qty: 2 });
    expect(sc(created)).toMatchObject({ status: 201, body: { order: { sku: 'S-1', qty: 2 } } });
    const missing = await call(client, 'createOrder', { qty: 2 });
    expect(sc(missing)).toMatchObject({ code: 'invalid_tool_input', field: 'sku' });
  });
});

describe('usage per tool (issue 25 item 7)', () => {
  test('the usage route counts exactly the calls made, on both replicas; Prometheus counts them too', async () => {
    type Row = {
      tool: string;
      calls: number;
      errors: number;
      p50Ms: number | null;
      p95Ms: number | null;
      p99Ms: number | null;
    };
    const expected = [...made.entries()]
      .map(([tool, m]) => ({ tool, ...m }))
      .sort((a, b) => a.tool.localeCompare(b.tool));
    const path = `/workspaces/${WS}/agents/${AGENT}/usage?from=${encodeURIComponent(started.toISOString())}`;
    let tools: Row[] = [];
    // Each replica writes its calls in batches about every second: poll with a generous bound.
    for (const until = Date.now() + 20_000; Date.now() < until;) {
      const res = await api(path);
      expect(res.status).toBe(200);
      tools = (res.body?.tools as Row[]).filter((t) => t.calls > 0);
      const got = tools
        .map(({ tool, calls, errors }) => ({ tool, calls, errors }))
        .sort((a, b) => a.tool.localeCompare(b.tool));
      if (JSON.stringify(got) === JSON.stringify(expected)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(
      tools.map(({ tool, calls, errors }) => ({ tool, calls, errors })).sort((a, b) => a.tool.localeCompare(b.tool)),
    ).toEqual(expected);
    for (const row of tools) {
      expect(row.p50Ms).toEqual(expect.any(Number));
      expect(row.p99Ms ?? 0).toBeGreaterThanOrEqual(row.p50Ms ?? 0);
    }
    const full = await api(path);
    expect(full.body).toMatchObject({ from: started.toISOString(), to: expect.any(String) as unknown });
    // A bound tool that was never called is listed with zero calls and no percentiles.
    expect(full.body?.tools).toContainEqual({
      tool: 'draft_only',
      calls: 0,
      errors: 0,
      p50Ms: null,
      p95Ms: null,
      p99Ms: null,
    });

    const gateway = stack.gateways[0];
    if (gateway === undefined) throw new Error('no gateway');
    const metrics = await fetch(`http://127.0.0.1:${stack.envOf(gateway.child).METRICS_PORT}/metrics`);
    const text = await metrics.text();
    expect(text).toMatch(
      new RegExp(
        `dagu_agent_tool_calls_total\\{[^}]*workspace="${WS}",agent="${AGENT}",tool="get_refund",outcome="ok"[^}]*\\} \\d+`,
      ),
    );
    expect(text).toContain('dagu_agent_tool_call_duration_seconds_bucket');
  });
});
