/**
 * OAuth on a published agent's endpoint (issue 24 item 3 with issue 23 items 0 and 1): the
 * agent's URL is an OAuth resource of its own — its 401 names its own Protected Resource
 * Metadata, the SDK client's own OAuth provider gets a token whose audience is that URL and
 * sees the agent's catalog, and a token for one endpoint opens no other.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { MemoryProvider, PretendBrowser, initializeStatus, walkAuthorization } from './oauth-http';
import { restCall } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const REDIRECT = 'http://127.0.0.1:47124/callback';
const WS = 'acme';
let stack: Stack;
let adminToken: string;

const agentUrl = (slug: string): string => `${stack.baseUrl}/mcp/v1/${WS}/${slug}`;

async function publish(slug: string): Promise<void> {
  const api = (path: string, method: string, body: unknown) =>
    restCall(stack.baseUrl, path, { method, token: adminToken, body });
  expect((await api(`/workspaces/${WS}/agents`, 'POST', { slug, title: slug })).status).toBe(201);
  const tools = [{ kind: 'dagu_tool', tool: 'dagu_read', restrictions: { targets: ['dags', 'reference'] } }];
  expect((await api(`/workspaces/${WS}/agents/${slug}/tools`, 'PUT', { tools })).status).toBe(200);
  expect((await api(`/workspaces/${WS}/agents/${slug}`, 'PATCH', { state: 'published' })).status).toBe(200);
}

/** The SDK client's whole OAuth flow against `url`, the person played over HTTP; returns the provider. */
async function authorize(url: string): Promise<MemoryProvider> {
  const provider = new MemoryProvider(REDIRECT);
  const first = new Client({ name: 'agent-oauth', version: '1' });
  await expect(
    first.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider })),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(url);
  const { redirect } = await walkAuthorization(
    new PretendBrowser(stack.baseUrl),
    provider.authorizationUrl?.href ?? '',
    ADMIN,
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await transport.finishAuth(redirect.searchParams.get('code') ?? '');
  return provider;
}

beforeAll(async () => {
  stack = await startStack(
    { AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password },
    { publicUrl: true },
  );
  adminToken = String((await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN })).body?.token);
  await publish('ops-bot');
  await publish('other-bot');
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

test("an agent endpoint's 401 points at its own resource metadata, whose resource is the agent's URL", async () => {
  const res = await fetch(agentUrl('ops-bot'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  expect(res.status).toBe(401);
  const metadataUrl = `${stack.baseUrl}/.well-known/oauth-protected-resource/mcp/v1/${WS}/ops-bot`;
  expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${metadataUrl}"`);
  const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
  expect(metadata).toMatchObject({ resource: agentUrl('ops-bot'), authorization_servers: [stack.baseUrl] });
});

test("the SDK client's OAuth flow opens the agent's endpoint, with the agent's catalog only; the token opens nothing else", async () => {
  const provider = await authorize(agentUrl('ops-bot'));
  const claims = JSON.parse(
    Buffer.from((provider.saved?.access_token ?? '').split('.')[1] ?? '', 'base64url').toString(),
  ) as Record<string, unknown>;
  expect(claims.aud).toBe(agentUrl('ops-bot'));

  const client = new Client({ name: 'agent-oauth', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(agentUrl('ops-bot')), { authProvider: provider }));
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['dagu_read']);
  const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
  expect(read.isError).not.toBe(true);
  const refused = await client.callTool({ name: 'dagu_read', arguments: { target: 'runs' } });
  expect(refused.isError).toBe(true);
  await client.close();

  const token = provider.saved?.access_token ?? '';
  expect(await initializeStatus(stack.mcpUrl, token)).toBe(401);
  expect(await initializeStatus(agentUrl('other-bot'), token)).toBe(401);

  const main = await authorize(stack.mcpUrl);
  expect(await initializeStatus(agentUrl('ops-bot'), main.saved?.access_token ?? '')).toBe(401);
  expect(await initializeStatus(stack.mcpUrl, main.saved?.access_token ?? '')).toBe(200);
}, 120_000);
