/**
 * The OAuth authorization server under `BASE_PATH`, and what admins and user deletion do to
 * grants (issue 23 items 0, 1, 5, 6): the whole flow with the SDK client at `/dagu/mcp`, an
 * admin who sees and revokes another person's authorization, a person who may not, and a
 * deleted user whose refresh and access tokens stop.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { MemoryProvider, PretendBrowser, initializeStatus, walkAuthorization } from './oauth-http';
import { restCall } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const REDIRECT = 'http://127.0.0.1:47125/callback';
const BASE_PATH = '/dagu';
let stack: Stack;
let adminToken: string;

const mcpUrl = (): string => `${stack.baseUrl}${BASE_PATH}/mcp`;

async function createUser(username: string, role: string): Promise<{ id: string; username: string; password: string }> {
  const password = `${username}-password-1`;
  const res = await restCall(stack.baseUrl, '/users', {
    method: 'POST',
    token: adminToken,
    body: { username, role, password },
  });
  expect(res.status).toBe(201);
  return { id: String(res.body?.id), username, password };
}

/** The SDK client's flow at `/dagu/mcp`, the person played over HTTP; the signed-in browser is kept. */
async function authorizeAs(who: { username: string; password: string }) {
  const provider = new MemoryProvider(REDIRECT);
  await expect(
    new Client({ name: 'oauth-admin', version: '1' }).connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider }),
    ),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  const browser = new PretendBrowser(stack.baseUrl);
  const { redirect } = await walkAuthorization(browser, provider.authorizationUrl?.href ?? '', who);
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider });
  await transport.finishAuth(redirect.searchParams.get('code') ?? '');
  return { provider, browser, clientId: String(provider.info?.client_id) };
}

const refresh = async (provider: MemoryProvider): Promise<Record<string, unknown>> => {
  const res = await fetch(`${stack.baseUrl}${BASE_PATH}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: provider.saved?.refresh_token ?? '',
      client_id: String(provider.info?.client_id),
    }).toString(),
  });
  return (await res.json()) as Record<string, unknown>;
};

/** The authorizations JSON API as the person signed in to `browser`. */
async function authorizationsApi(
  browser: PretendBrowser,
  method: 'GET' | 'DELETE',
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const cookie = `dagu_session=${browser.cookie('dagu_session') ?? ''}`;
  const session = JSON.parse((await browser.get(`${BASE_PATH}/api/v1/session`)).text) as { csrfToken: string };
  const res = await fetch(`${stack.baseUrl}${BASE_PATH}/api/mcp${path}`, {
    method,
    headers: { cookie, 'x-csrf-token': session.csrfToken },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  stack = await startStack(
    {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      BASE_PATH,
      OAUTH_REVOCATION_CHECK_MS: '1000',
    },
    { publicUrl: true },
  );
  adminToken = String((await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN })).body?.token);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

test('under BASE_PATH: the 401, both metadata documents and the SDK client flow use the /dagu addresses', async () => {
  const denied = await fetch(mcpUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  expect(denied.status).toBe(401);
  const prm = `${stack.baseUrl}/.well-known/oauth-protected-resource${BASE_PATH}/mcp`;
  expect(denied.headers.get('www-authenticate')).toContain(`resource_metadata="${prm}"`);
  expect(await (await fetch(prm)).json()).toMatchObject({ resource: mcpUrl() });
  const as = (await (
    await fetch(`${stack.baseUrl}/.well-known/oauth-authorization-server${BASE_PATH}`)
  ).json()) as Record<string, unknown>;
  expect(as).toMatchObject({
    issuer: `${stack.baseUrl}${BASE_PATH}`,
    authorization_endpoint: `${stack.baseUrl}${BASE_PATH}/oauth/authorize`,
    token_endpoint: `${stack.baseUrl}${BASE_PATH}/oauth/token`,
  });

  const { provider } = await authorizeAs(ADMIN);
  const client = new Client({ name: 'oauth-admin', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider }));
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
    expect.arrayContaining(['dagu_read', 'dagu_change', 'dagu_execute']),
  );
  await client.close();
}, 120_000);

test("an admin sees and revokes another person's authorization; the person may not look at others'", async () => {
  const bob = await createUser('bob', 'viewer');
  const bobs = await authorizeAs(bob);
  expect(await initializeStatus(mcpUrl(), bobs.provider.saved?.access_token ?? '')).toBe(200);

  const own = await authorizationsApi(bobs.browser, 'GET', '/authorizations');
  expect(own.body.authorizations).toEqual([expect.objectContaining({ clientId: bobs.clientId, username: 'bob' })]);
  expect((await authorizationsApi(bobs.browser, 'GET', '/authorizations?user=all')).status).toBe(403);

  const admins = await authorizeAs(ADMIN);
  const all = await authorizationsApi(admins.browser, 'GET', '/authorizations?user=all');
  const entries = all.body.authorizations as Array<Record<string, unknown>>;
  expect(entries).toEqual(
    expect.arrayContaining([expect.objectContaining({ clientId: bobs.clientId, userId: bob.id, username: 'bob' })]),
  );
  const revoked = await authorizationsApi(admins.browser, 'DELETE', `/authorizations/${bobs.clientId}?user=${bob.id}`);
  expect(revoked).toEqual({ status: 200, body: { ok: true, message: 'Authorizations revoked' } });
  expect((await refresh(bobs.provider)).error).toBe('invalid_grant');
  for (let i = 0; i < 50 && (await initializeStatus(mcpUrl(), bobs.provider.saved?.access_token ?? '')) !== 401; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(await initializeStatus(mcpUrl(), bobs.provider.saved?.access_token ?? '')).toBe(401);
}, 120_000);

test('deleting a user ends their grants: the refresh token fails and the access token stops', async () => {
  const carol = await createUser('carol', 'developer');
  const carols = await authorizeAs(carol);
  expect(await initializeStatus(mcpUrl(), carols.provider.saved?.access_token ?? '')).toBe(200);
  expect((await restCall(stack.baseUrl, `/users/${carol.id}`, { method: 'DELETE', token: adminToken })).status).toBe(
    204,
  );
  expect((await refresh(carols.provider)).error).toBe('invalid_grant');
  // The user cache (5 s) bounds how long a deleted user's access token still opens /mcp.
  for (let i = 0; i < 100 && (await initializeStatus(mcpUrl(), carols.provider.saved?.access_token ?? '')) !== 401; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(await initializeStatus(mcpUrl(), carols.provider.saved?.access_token ?? '')).toBe(401);
}, 120_000);
