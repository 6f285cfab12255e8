/**
 * No futile step-up on the gateway's own `/mcp` (issue 41 item 4; mcp-revisions §3 "Ours"):
 * a 403 `insufficient_scope` is sent only when a new consent could grant the scope (the
 * person's current role allows it, the token lacks it); when the role can never hold it,
 * the call reaches the tool and is dagu-model §10's role failure, an `isError` result with
 * `unauthorized`. `tools/list` leaves out a tool none of whose actions the principal's role
 * (capped by the token's scopes) allows, for every credential. `dagu_change` in preview
 * only reads: `dagu:read` suffices. Driven by the MCP SDK client with its own OAuth
 * support (the person played over HTTP), and raw HTTP where the status is the point.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { MemoryProvider, PretendBrowser, walkAuthorization } from './oauth-http';
import { restCall } from './rest-call';
import { connectClient, startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const REDIRECT = 'http://127.0.0.1:47127/callback';
const SPEC = 'steps:\n  - name: a\n    run: echo hello\n';
let stack: Stack;
let adminToken: string;
const clients: Client[] = [];

async function createUser(username: string, role: string): Promise<{ username: string; password: string }> {
  const password = `${username}-password-1`;
  const res = await restCall(stack.baseUrl, '/users', {
    method: 'POST',
    token: adminToken,
    body: { username, role, password },
  });
  expect(res.status).toBe(201);
  return { username, password };
}

/**
 * The SDK client's own flow (401 → registration → authorization → code exchange), the person
 * played over HTTP. `scope` replaces the scope the SDK asks for (a client that asks for less).
 */
async function authorizeAs(who: { username: string; password: string }, scope?: string): Promise<MemoryProvider> {
  const provider = new MemoryProvider(REDIRECT);
  await expect(
    new Client({ name: 'step-up', version: '1' }).connect(
      new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider }),
    ),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  const url = new URL(provider.authorizationUrl?.href ?? '');
  if (scope !== undefined) url.searchParams.set('scope', scope);
  const { redirect } = await walkAuthorization(new PretendBrowser(stack.baseUrl), url.href, who);
  await new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider }).finishAuth(
    redirect.searchParams.get('code') ?? '',
  );
  return provider;
}

async function connect(
  provider: MemoryProvider,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'step-up', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const toolNames = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);

/** The `code` of an `isError` result (undefined for a success). */
function errorCode(result: Awaited<ReturnType<Client['callTool']>>): unknown {
  return result.isError === true ? (result.structuredContent as Record<string, unknown> | undefined)?.code : undefined;
}

/** One raw `tools/call` in `transport`'s session with `provider`'s token: the HTTP status and challenge. */
async function rawCall(
  provider: MemoryProvider,
  transport: StreamableHTTPClientTransport,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; challenge: string | null }> {
  const res = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${provider.saved?.access_token ?? ''}`,
      'mcp-session-id': transport.sessionId ?? '',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
  });
  await res.body?.cancel();
  return { status: res.status, challenge: res.headers.get('www-authenticate') };
}

beforeAll(async () => {
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
  });
  adminToken = String((await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN })).body?.token);
  const put = await restCall(stack.baseUrl, '/dags/hello', { method: 'PUT', token: adminToken, body: { spec: SPEC } });
  expect([200, 201]).toContain(put.status);
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.stop();
});

describe("a viewer's OAuth token (dagu:read; the role can never hold more)", () => {
  let provider: MemoryProvider;
  let client: Client;
  beforeAll(async () => {
    provider = await authorizeAs(await createUser('vera', 'viewer'));
    expect(provider.saved?.scope).toBe('dagu:read');
    ({ client } = await connect(provider));
  });

  it('tools/list offers dagu_read and dagu_change, not dagu_execute', async () => {
    expect(await toolNames(client)).toEqual(['dagu_read', 'dagu_change']);
  });

  it('dagu_execute is a tool error unauthorized, not an HTTP 403 step-up', async () => {
    const result = await client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'hello' } });
    expect(errorCode(result)).toBe('unauthorized');
    expect(JSON.stringify(result.structuredContent)).toMatch(/operator/);
    // The SDK was never sent to re-authorize.
    expect(provider.authorizationUrl?.searchParams.get('scope')).not.toBe('dagu:execute');
  });

  it('dagu_change preview works with dagu:read; apply is a tool error unauthorized', async () => {
    const preview = await client.callTool({ name: 'dagu_change', arguments: { name: 'viewer-dag', spec: SPEC } });
    expect(preview.isError).not.toBe(true);
    expect(preview.structuredContent).toMatchObject({ mode: 'preview', valid: true, applied: false });
    const explicit = await client.callTool({
      name: 'dagu_change',
      arguments: { mode: 'preview', name: 'viewer-dag', spec: SPEC },
    });
    expect(explicit.isError).not.toBe(true);
    const apply = await client.callTool({
      name: 'dagu_change',
      arguments: { mode: 'apply', name: 'viewer-dag', spec: SPEC },
    });
    expect(errorCode(apply)).toBe('unauthorized');
  });
});

it("a viewer's API key does not list dagu_execute either; calling it is unauthorized", async () => {
  const key = await restCall(stack.baseUrl, '/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: 'step-up-viewer', role: 'viewer', surfaces: ['mcp'] },
  });
  expect(key.status).toBe(201);
  const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${String(key.body?.key)}` });
  clients.push(client);
  expect(await toolNames(client)).toEqual(['dagu_read', 'dagu_change']);
  const result = await client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'hello' } });
  expect(errorCode(result)).toBe('unauthorized');
});

it('a developer whose token holds only dagu:read: no dagu_execute listed; apply and an inline start are 403 step-ups', async () => {
  const provider = await authorizeAs(await createUser('devi', 'developer'), 'dagu:read');
  expect(provider.saved?.scope).toBe('dagu:read');
  const { client, transport } = await connect(provider);
  expect(await toolNames(client)).toEqual(['dagu_read', 'dagu_change']);
  const preview = await client.callTool({ name: 'dagu_change', arguments: { name: 'dev-dag', spec: SPEC } });
  expect(preview.structuredContent).toMatchObject({ valid: true, applied: false });
  // Their role could hold dagu:change and dagu:execute: a new consent can grant them, so step up.
  const apply = await rawCall(provider, transport, 'dagu_change', { mode: 'apply', name: 'dev-dag', spec: SPEC });
  expect(apply.status).toBe(403);
  expect(apply.challenge).toMatch(/^Bearer error="insufficient_scope", scope="dagu:change", resource_metadata="/);
  // An inline start needs only the developer role, but the token does not hold dagu:execute.
  const inline = await rawCall(provider, transport, 'dagu_execute', { action: 'start', name: 'inline', spec: SPEC });
  expect(inline.status).toBe(403);
  expect(inline.challenge).toMatch(/scope="dagu:execute"/);
});

it('an operator whose token lacks dagu:execute gets 403 insufficient_scope, and the step-up succeeds', async () => {
  const otto = await createUser('otto', 'operator');
  const provider = await authorizeAs(otto, 'dagu:read');
  const { client, transport } = await connect(provider);
  expect(await toolNames(client)).toEqual(['dagu_read', 'dagu_change']);
  const raw = await rawCall(provider, transport, 'dagu_execute', { action: 'start', name: 'hello' });
  expect(raw.status).toBe(403);
  expect(raw.challenge).toMatch(
    new RegExp(
      `^Bearer error="insufficient_scope", scope="dagu:execute", resource_metadata="${stack.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    ),
  );

  // The SDK steps up (a client without a refresh token goes back to the authorization with the challenged scope) …
  provider.saved = { access_token: provider.saved?.access_token ?? '', token_type: 'Bearer' };
  await expect(
    client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'hello' } }),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl?.searchParams.get('scope')).toBe('dagu:execute');
  // … the person consents (the remembered grant does not cover dagu:execute) …
  const { redirect, consentShown } = await walkAuthorization(
    new PretendBrowser(stack.baseUrl),
    provider.authorizationUrl?.href ?? '',
    otto,
  );
  expect(consentShown).toBe(true);
  await new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider }).finishAuth(
    redirect.searchParams.get('code') ?? '',
  );
  expect(provider.saved?.scope).toContain('dagu:execute');
  // The step-up adds to what was granted: reading still works with the new token.
  expect(provider.saved?.scope).toContain('dagu:read');
  // … and the call goes through.
  const { client: after } = await connect(provider);
  expect(await toolNames(after)).toContain('dagu_execute');
  const started = await after.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'hello' } });
  expect(started.isError).not.toBe(true);
}, 60_000);
