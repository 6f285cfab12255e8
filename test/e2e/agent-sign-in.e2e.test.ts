/**
 * Who may use an agent, on whose authority (issue 41 items 1, 2, 3 and 6), through the real
 * stack: the SDK client's own OAuth support gets the tokens, and the person signs in and
 * answers the consent page in Chromium. Per-agent sign-in policies (`own_role`, `delegated`,
 * `keys`), the person recorded beside the agent (audit rows, `startedBy`), a consent page
 * that names the agent and can grant less, and the PATCH wire shape.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchBrowser, saveScreenshot } from './browser';
import { MemoryProvider, initializeStatus } from './oauth-http';
import { restCall, type RestInit } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-41' };
const VIEWER = { username: 'vera', password: 'viewer-password-41', role: 'viewer' };
const OPERATOR = { username: 'otto', password: 'operator-password-41', role: 'operator' };
const WS = 'acme';
const DAG = 'refund-order';
const SPEC = `description: Refunds an order
params:
  - ORDER: "0"
steps:
  - name: refund
    command: echo refunded \${ORDER}
`;

let stack: Stack;
let browser: Browser;
let adminToken = '';
let callback: Server;
let callbackPort = 0;
const received: URL[] = [];
const clients: Client[] = [];

const api = (path: string, init: RestInit = {}) => restCall(stack.baseUrl, path, { token: adminToken, ...init });
const agentUrl = (slug: string): string => `${stack.baseUrl}/mcp/v1/${WS}/${slug}`;
const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

async function publish(slug: string, tools: unknown[], signIn?: unknown): Promise<void> {
  expect(
    (await api(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug, title: `Agent ${slug}` } })).status,
  ).toBe(201);
  expect((await api(`/workspaces/${WS}/agents/${slug}/tools`, { method: 'PUT', body: { tools } })).status).toBe(200);
  const body = { state: 'published', ...(signIn !== undefined ? { signIn } : {}) };
  expect((await api(`/workspaces/${WS}/agents/${slug}`, { method: 'PATCH', body })).status).toBe(200);
}

/** The callback the browser lands on for `state`, once the client's loopback listener got it. */
async function callbackWith(state: string): Promise<URL> {
  for (let i = 0; i < 200; i++) {
    const hit = received.find((u) => u.searchParams.get('state') === state);
    if (hit !== undefined) return hit;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no callback with state ${state}`);
}

/** A provider whose `state` is unique per flow, so each flow's callback is told apart. */
class FlowProvider extends MemoryProvider {
  constructor(private readonly flowState: string) {
    super(`http://127.0.0.1:${callbackPort}/callback`);
  }
  override state(): string {
    return this.flowState;
  }
}

/**
 * The SDK client's OAuth flow against `url`, the person in a fresh Chromium context: sign in,
 * untick `untick` on the consent page, Authorize. Returns the provider holding the tokens and
 * the consent page's text.
 */
async function signInWithOAuth(
  url: string,
  person: { username: string; password: string },
  untick: readonly string[] = [],
  screenshot?: string,
): Promise<{ provider: MemoryProvider; consent: string }> {
  const state = `flow-${Math.random().toString(36).slice(2)}`;
  const provider = new FlowProvider(state);
  const first = new Client({ name: 'agent-sign-in', version: '1' });
  await expect(
    first.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider })),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(provider.authorizationUrl?.href ?? '');
    await page.fill('#username', person.username);
    await page.fill('#password', person.password);
    await page.click('button[type="submit"]');
    await page.waitForSelector('button[value="allow"]');
    const consent = (await page.textContent('body')) ?? '';
    for (const scope of untick) await page.uncheck(`input[name="scope"][value="${scope}"]`);
    if (screenshot !== undefined) await saveScreenshot(page, screenshot);
    await page.click('button[value="allow"]');
    const redirect = await callbackWith(state);
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await transport.finishAuth(redirect.searchParams.get('code') ?? '');
    return { provider, consent };
  } finally {
    await context.close();
  }
}

async function connect(url: string, provider: MemoryProvider): Promise<Client> {
  const client = new Client({ name: 'agent-sign-in', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** Audit rows (newest first) until `match` finds one, or the wait ends: service rows are drained asynchronously. */
async function auditRow(query: string, match: (row: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 60; i++) {
    const page = await api(`/audit?${query}&limit=200`);
    const row = ((page.body?.items ?? []) as Record<string, unknown>[]).find(match);
    if (row !== undefined) return row;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no audit row for ${query}`);
}

beforeAll(async () => {
  callback = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', `http://127.0.0.1:${callbackPort}`));
    res.end('You can close this window.');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackPort = (callback.address() as AddressInfo).port;
  browser = await launchBrowser();
  stack = await startStack(
    { AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password },
    { publicUrl: true },
  );
  adminToken = String((await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN })).body?.token);
  for (const user of [VIEWER, OPERATOR]) expect((await api('/users', { method: 'POST', body: user })).status).toBe(201);
  expect((await api(`/dags/${DAG}`, { method: 'PUT', body: { spec: SPEC } })).status).toBe(201);
  const read = { kind: 'dagu_tool', tool: 'dagu_read', restrictions: { targets: ['dags'] } };
  await publish('ops-bot', [read, { kind: 'dag', dag: DAG, waitSeconds: 30 }]);
  await publish('help-desk', [{ kind: 'dag', dag: DAG, waitSeconds: 30 }], {
    mode: 'delegated',
    users: [VIEWER.username],
  });
  await publish('key-bot', [read], { mode: 'keys' });
}, 240_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await browser?.close();
  await stack?.stop();
  callback?.close();
});

describe('the sign-in policy on the wire (issue 41 item 6)', () => {
  test('agents read back their policy; a new one is own_role; delegated needs a role or a user', async () => {
    expect((await api(`/workspaces/${WS}/agents/ops-bot`)).body?.signIn).toEqual({ mode: 'own_role' });
    expect((await api(`/workspaces/${WS}/agents/help-desk`)).body?.signIn).toEqual({
      mode: 'delegated',
      users: [VIEWER.username],
    });
    const items = ((await api(`/workspaces/${WS}/agents`)).body?.items ?? []) as Record<string, unknown>[];
    expect(items.find((a) => a.slug === 'key-bot')?.signIn).toEqual({ mode: 'keys' });
    const empty = await api(`/workspaces/${WS}/agents/ops-bot`, {
      method: 'PATCH',
      body: { signIn: { mode: 'delegated' } },
    });
    expect(empty.status).toBe(400);
    expect(empty.body?.code).toBe('invalid_request');
    const unknown = await api(`/workspaces/${WS}/agents/ops-bot`, {
      method: 'PATCH',
      body: { signIn: { mode: 'all' } },
    });
    expect(unknown.status).toBe(400);
    expect((await api(`/workspaces/${WS}/agents/ops-bot`)).body?.signIn).toEqual({ mode: 'own_role' });
  });
});

describe('own_role: a person acts with their own role, narrowed by the agent', () => {
  test('a viewer can read through the agent but not start a run through its DAG tool, which it does not list', async () => {
    const { provider, consent } = await signInWithOAuth(agentUrl('ops-bot'), VIEWER, [], 'oauth-consent-agent');
    // The consent page names the agent, its tools and the authority the client will have.
    expect(consent).toContain(`${WS}/ops-bot`);
    expect(consent).toContain(DAG);
    expect(consent).toMatch(/your own role \(viewer\)/);
    const client = await connect(agentUrl('ops-bot'), provider);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['dagu_read']);
    expect((await call(client, 'dagu_read', { target: 'dags' })).isError).not.toBe(true);
    const refused = await call(client, DAG, { ORDER: '7' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent?.code).toBe('unauthorized');
    // The audit row names the agent and the person, with the credential it really was.
    const row = await auditRow(
      'category=mcp',
      (r) =>
        r.actor === `agent:${WS}/ops-bot` &&
        typeof r.target === 'string' &&
        r.target.endsWith(`:${DAG}`) &&
        r.outcome !== 'succeeded',
    );
    expect(row.credentialType).toBe('oauth');
    expect(row.onBehalfOf).toMatchObject({ kind: 'user', name: VIEWER.username });
  }, 120_000);

  test('an operator on the same agent starts the run; startedBy names the agent and the person', async () => {
    const { provider } = await signInWithOAuth(agentUrl('ops-bot'), OPERATOR);
    const client = await connect(agentUrl('ops-bot'), provider);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['dagu_read', DAG].sort());
    const started = await call(client, DAG, { ORDER: '8' });
    expect(started.isError).not.toBe(true);
    const run = await api(`/dag-runs/${DAG}/${String(started.structuredContent?.dagRunId)}`);
    expect(run.body?.startedBy).toMatchObject({
      kind: 'agent',
      name: `${WS}/ops-bot`,
      onBehalfOf: { kind: 'user', name: OPERATOR.username },
    });
  }, 120_000);
});

describe('delegated: the listed people act with the binding authors’ authority', () => {
  test('the listed viewer starts the run; the run and the drained audit row name both', async () => {
    const { provider, consent } = await signInWithOAuth(agentUrl('help-desk'), VIEWER);
    expect(consent).toContain(`${WS}/help-desk`);
    expect(consent).toMatch(/agent's own authority/);
    // A delegation grants every scope asked, beyond the viewer's own role.
    expect(consent).toContain('dagu:execute');
    const client = await connect(agentUrl('help-desk'), provider);
    const started = await call(client, DAG, { ORDER: '9' });
    expect(started.isError).not.toBe(true);
    const dagRunId = String(started.structuredContent?.dagRunId);
    const run = await api(`/dag-runs/${DAG}/${dagRunId}`);
    expect(run.body?.startedBy).toMatchObject({
      kind: 'agent',
      name: `${WS}/help-desk`,
      onBehalfOf: { kind: 'user', name: VIEWER.username },
    });
    const row = await auditRow(
      'category=run',
      (r) => r.actor === `agent:${WS}/help-desk` && typeof r.target === 'string' && r.target.includes(dagRunId),
    );
    expect(row.credentialType).toBe('oauth');
    expect(row.onBehalfOf).toMatchObject({ kind: 'user', name: VIEWER.username });
  }, 120_000);

  test('someone not on the list is refused at consent, with a page that says why', async () => {
    const provider = new FlowProvider('not-listed');
    const first = new Client({ name: 'agent-sign-in', version: '1' });
    await expect(
      first.connect(new StreamableHTTPClientTransport(new URL(agentUrl('help-desk')), { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(provider.authorizationUrl?.href ?? '');
    await page.fill('#username', OPERATOR.username);
    await page.fill('#password', OPERATOR.password);
    await page.click('button[type="submit"]');
    await page.waitForSelector('h1');
    const text = (await page.textContent('body')) ?? '';
    await saveScreenshot(page, 'oauth-agent-not-delegated');
    await context.close();
    expect(text).toContain('Not allowed');
    expect(text).toContain(`${OPERATOR.username} (operator) is not one of them`);
    expect(received.some((u) => u.searchParams.get('state') === 'not-listed')).toBe(false);
  }, 120_000);
});

describe('keys: agent keys only', () => {
  test('no OAuth metadata or challenge; a token issued before the switch is refused', async () => {
    // Signed in while the agent still took OAuth…
    await api(`/workspaces/${WS}/agents/key-bot`, { method: 'PATCH', body: { signIn: { mode: 'own_role' } } });
    const { provider } = await signInWithOAuth(agentUrl('key-bot'), VIEWER);
    const token = provider.saved?.access_token ?? '';
    expect(await initializeStatus(agentUrl('key-bot'), token)).toBe(200);
    // …then switched to keys: the token no longer opens it, and OAuth is not offered.
    expect(
      (await api(`/workspaces/${WS}/agents/key-bot`, { method: 'PATCH', body: { signIn: { mode: 'keys' } } })).status,
    ).toBe(200);
    expect(await initializeStatus(agentUrl('key-bot'), token)).toBe(401);
    const bare = await fetch(agentUrl('key-bot'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).not.toContain('resource_metadata');
    const metadata = await fetch(`${stack.baseUrl}/.well-known/oauth-protected-resource/mcp/v1/${WS}/key-bot`);
    expect(metadata.status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/.well-known/oauth-protected-resource/mcp/v1/${WS}/ops-bot`)).status).toBe(
      200,
    );
  }, 120_000);
});

describe('a switched policy needs a new consent', () => {
  test('a token from an own_role sign-in stops opening the agent once it is delegated, even to that person', async () => {
    await publish('switch-bot', [{ kind: 'dag', dag: DAG, waitSeconds: 30 }]);
    const { provider } = await signInWithOAuth(agentUrl('switch-bot'), VIEWER);
    const token = provider.saved?.access_token ?? '';
    expect(await initializeStatus(agentUrl('switch-bot'), token)).toBe(200);
    const patched = await api(`/workspaces/${WS}/agents/switch-bot`, {
      method: 'PATCH',
      body: { signIn: { mode: 'delegated', users: [VIEWER.username] } },
    });
    expect(patched.status).toBe(200);
    // The viewer would now act with the authors' authority: not on a consent given for their own role.
    expect(await initializeStatus(agentUrl('switch-bot'), token)).toBe(401);
    const refreshed = await fetch(`${stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: provider.saved?.refresh_token ?? '',
        client_id: String(provider.info?.client_id),
      }).toString(),
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error?: string }).error).toBe('invalid_grant');
    // Signed in again under the delegation, then taken off the list: refused at once, and audited by name.
    const again = await signInWithOAuth(agentUrl('switch-bot'), VIEWER);
    expect(await initializeStatus(agentUrl('switch-bot'), again.provider.saved?.access_token ?? '')).toBe(200);
    await api(`/workspaces/${WS}/agents/switch-bot`, {
      method: 'PATCH',
      body: { signIn: { mode: 'delegated', users: [OPERATOR.username] } },
    });
    expect(await initializeStatus(agentUrl('switch-bot'), again.provider.saved?.access_token ?? '')).toBe(403);
    const denied = await auditRow(
      'action=mcp.request.denied',
      (r) => typeof r.target === 'string' && r.target.includes('switch-bot') && r.actor === VIEWER.username,
    );
    expect(denied.credentialType).toBe('oauth');
  }, 180_000);
});

describe('consent that narrows (issue 41 item 3)', () => {
  test('unticking dagu:execute yields a token without it', async () => {
    const { provider, consent } = await signInWithOAuth(stack.mcpUrl, ADMIN, ['dagu:execute'], 'oauth-consent-untick');
    expect(consent).toContain("dagu-mcp's MCP endpoint");
    const token = provider.saved?.access_token ?? '';
    const scopes = String(claimsOf(token).scope).split(' ');
    expect(scopes).toContain('dagu:read');
    expect(scopes).not.toContain('dagu:execute');
    expect(String(provider.saved?.scope ?? '').split(' ')).not.toContain('dagu:execute');
  }, 120_000);
});
