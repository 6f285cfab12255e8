/**
 * The built-in OAuth 2.1 authorization server end to end (issue 23;
 * mcp-revisions §3): the built stack with AUTH_MODE=builtin and two gateway
 * replicas behind a round-robin proxy (PUBLIC_URL = the proxy), the MCP SDK
 * client's own OAuth client provider, and a person's browser played over HTTP.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { startStack, type Stack } from './stack';
import { MemoryProvider, PretendBrowser, walkAuthorization } from './oauth-http';
import { restCall } from './rest-call';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const VIEWER = { username: 'vera', password: 'viewer-password-123' };
const REDIRECT = 'http://127.0.0.1:47123/callback';
let stack: Stack;
let redis: Redis;
/** A local HTTPS server of Client ID Metadata Documents (its self-signed certificate trusted by the gateways). */
let documents: HttpsServer;
let documentsUrl: string;
const served = new Map<string, unknown>();

function startDocumentServer(): Promise<{ server: HttpsServer; caFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-cimd-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const doc = served.get(req.url ?? '');
    if (doc === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0, no-store' });
    res.end(JSON.stringify(doc));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, caFile: cert })));
}

const form = async (url: string, body: Record<string, string>) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A PKCE pair (RFC 7636 S256). */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function register(extra: Record<string, unknown> = {}, base = stack.baseUrl) {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'raw client', redirect_uris: [REDIRECT], ...extra }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Registration, authorization (signed in as `who`), and the code exchange, by hand. */
async function authorizeByHand(
  options: { who?: typeof ADMIN; scope?: string; base?: string; browser?: PretendBrowser } = {},
) {
  const base = options.base ?? stack.baseUrl;
  const client = await register({}, base);
  const clientId = String(client.body.client_id);
  const { verifier, challenge } = pkce();
  const url = new URL(`${base}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's1',
    resource: `${stack.baseUrl}/mcp`,
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
  }).toString();
  const browser = options.browser ?? new PretendBrowser(base);
  const { redirect } = await walkAuthorization(browser, url.href, options.who ?? ADMIN);
  const code = redirect.searchParams.get('code') ?? '';
  const exchange = (body: Record<string, string> = {}, at = base) =>
    form(`${at}/oauth/token`, {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      resource: `${stack.baseUrl}/mcp`,
      ...body,
    });
  return { clientId, code, redirect, exchange, browser };
}

const mcpPost = (token: string, body: unknown, url = stack.mcpUrl) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify(body),
  });
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
};

/** Polls until `check` is true or `ms` passed; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not within ${ms} ms`);
}

beforeAll(async () => {
  const docs = await startDocumentServer();
  documents = docs.server;
  documentsUrl = `https://localhost:${(documents.address() as AddressInfo).port}`;
  stack = await startStack(
    {
      NODE_EXTRA_CA_CERTS: docs.caFile,
      // Test-only: the metadata documents are served on loopback (the SSRF guard refuses it otherwise).
      OAUTH_CIMD_ALLOW_PRIVATE: 'true',
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      OAUTH_REFRESH_GRACE_SECONDS: '1',
      OAUTH_REVOCATION_CHECK_MS: '1000',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
    },
    { gatewayReplicas: 2, publicUrl: true },
  );
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  const token = String(login.body?.token);
  const created = await restCall(stack.baseUrl, '/users', {
    method: 'POST',
    token,
    body: { username: VIEWER.username, password: VIEWER.password, role: 'viewer' },
  });
  expect(created.status).toBe(201);
}, 90_000);

afterAll(async () => {
  documents?.close();
  redis?.disconnect();
  await stack?.stop();
});

describe('discovery (issue 23 item 1)', () => {
  it('401 on /mcp names the Protected Resource Metadata and the scopes', async () => {
    const res = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    const header = res.headers.get('www-authenticate') ?? '';
    expect(header).toMatch(
      new RegExp(
        `^Bearer resource_metadata="${stack.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="dagu:read dagu:change dagu:execute"`,
      ),
    );
  });

  it('serves RFC 9728 and RFC 8414 metadata built from PUBLIC_URL', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const prm = (await (await fetch(`${stack.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(prm).toMatchObject({ resource: `${stack.baseUrl}/mcp`, authorization_servers: [stack.baseUrl] });
    }
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const as = (await (
        await fetch(`${stack.baseUrl}${path}`, { headers: { host: 'evil.example' } })
      ).json()) as Record<string, unknown>;
      expect(as).toMatchObject({
        issuer: stack.baseUrl,
        authorization_endpoint: `${stack.baseUrl}/oauth/authorize`,
        token_endpoint: `${stack.baseUrl}/oauth/token`,
        registration_endpoint: `${stack.baseUrl}/oauth/register`,
        revocation_endpoint: `${stack.baseUrl}/oauth/revoke`,
        introspection_endpoint: `${stack.baseUrl}/oauth/introspect`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
        scopes_supported: ['dagu:read', 'dagu:change', 'dagu:execute'],
      });
    }
    const jwks = (await (await fetch(`${stack.baseUrl}/oauth/jwks`)).json()) as {
      keys: Array<Record<string, unknown>>;
    };
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });
});

describe('the SDK client completes the flow (issue 23 "Real client")', () => {
  it('registers, sends the person to sign in and consent, exchanges the code, and lists tools', async () => {
    const provider = new MemoryProvider(REDIRECT);
    const first = new Client({ name: 'oauth-e2e', version: '1' });
    await expect(
      first.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(`${stack.baseUrl}/mcp`);

    const { redirect, consentShown } = await walkAuthorization(
      new PretendBrowser(stack.baseUrl),
      provider.authorizationUrl?.href ?? '',
      ADMIN,
    );
    expect(consentShown).toBe(true);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
    expect(redirect.searchParams.get('state')).toBe('state-123');
    expect(redirect.searchParams.get('iss')).toBe(stack.baseUrl); // RFC 9207

    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider });
    await transport.finishAuth(redirect.searchParams.get('code') ?? '');
    expect(provider.saved?.refresh_token).toMatch(/^drt_/);
    expect(provider.saved?.scope).toBe('dagu:read dagu:change dagu:execute');
    const client = new Client({ name: 'oauth-e2e', version: '1' });
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['dagu_read', 'dagu_change', 'dagu_execute']),
    );
    const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
    expect(read.isError).not.toBe(true);
    await client.close();

    // The access token is a JWT for the MCP resource: iss, sub, aud, client_id, scope, jti.
    const [, payload] = (provider.saved?.access_token ?? '').split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({
      iss: stack.baseUrl,
      aud: `${stack.baseUrl}/mcp`,
      client_id: provider.info?.client_id,
    });
    expect(typeof claims.jti).toBe('string');
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);

    // OAuth access tokens are for MCP endpoints only (issue 23 item 5).
    const rest = await restCall(stack.baseUrl, '/dags', { token: provider.saved?.access_token ?? '' });
    expect(rest.status).toBe(401);
    expect(String(rest.body?.message)).toMatch(/MCP endpoints only/);
  }, 60_000);
});

describe('registration (issue 23 item 2)', () => {
  it('registers a public client with a UUID client_id (201, no secret)', async () => {
    const res = await register();
    expect(res.status).toBe(201);
    expect(res.body.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(res.body).not.toHaveProperty('client_secret');
    expect(res.body.token_endpoint_auth_method).toBe('none');
  });

  it.each([
    ['javascript:alert(1)'],
    ['data:text/html,x'],
    ['file:///tmp/x'],
    ['https://app.example.com/cb#x'],
    ['https://*.example.com/cb'],
    ['http://app.example.com/cb'],
  ])('refuses the redirect URI %s', async (uri) => {
    const res = await register({ redirect_uris: [uri] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  it('accepts https, loopback http on any port and a private-use scheme', async () => {
    const res = await register({
      redirect_uris: ['https://app.example.com/cb', 'http://localhost:9/cb', 'http://[::1]/cb', 'com.example.app:/cb'],
    });
    expect(res.status).toBe(201);
  });
});

describe('authorization codes and tokens (issue 23 items 3–4)', () => {
  it('a loopback redirect URI matches on any port (RFC 8252 §7.3)', async () => {
    const client = await register({ redirect_uris: ['http://127.0.0.1/cb'] });
    const { challenge } = pkce();
    const url = `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: String(client.body.client_id),
      redirect_uri: 'http://127.0.0.1:53682/cb',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()}`;
    const { redirect } = await walkAuthorization(new PretendBrowser(stack.baseUrl), url, ADMIN);
    expect(redirect.host).toBe('127.0.0.1:53682');
    expect(redirect.searchParams.get('code')).toMatch(/^dac_/);
  });

  it('Deny redirects with error=access_denied, state and iss', async () => {
    const client = await register();
    const url = `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: String(client.body.client_id),
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 'st',
    }).toString()}`;
    const { redirect } = await walkAuthorization(new PretendBrowser(stack.baseUrl), url, ADMIN, 'deny');
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    expect(redirect.searchParams.get('state')).toBe('st');
    expect(redirect.searchParams.get('iss')).toBe(stack.baseUrl);
  });

  it('PKCE, the exact redirect URI and the resource are checked; a replayed code revokes its tokens', async () => {
    // A redirect URI other than the authorization request's is refused, and the code is spent.
    const misdirected = await authorizeByHand();
    expect((await misdirected.exchange({ redirect_uri: 'http://127.0.0.1:47123/other' })).body.error).toBe(
      'invalid_grant',
    );
    expect((await misdirected.exchange()).body.error).toBe('invalid_grant');

    // A wrong code_verifier uses the code up: the right one afterwards is refused too (issue 42).
    const guessed = await authorizeByHand();
    expect((await guessed.exchange({ code_verifier: 'wrong'.repeat(10) })).body.error).toBe('invalid_grant');
    expect((await guessed.exchange()).body.error).toBe('invalid_grant');

    const flow = await authorizeByHand();
    const first = await flow.exchange();
    expect(first.status).toBe(200);
    const replay = await flow.exchange();
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const refresh = await form(`${stack.baseUrl}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: String(first.body.refresh_token),
      client_id: flow.clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
    await within(3000, async () => (await mcpPost(String(first.body.access_token), initialize)).status === 401);
  });

  it('a wrong resource is refused; an expired code is refused', async () => {
    const wrong = await authorizeByHand();
    const res = await wrong.exchange({ resource: 'https://elsewhere.example/mcp' });
    expect(res.body.error).toBe('invalid_target');
    // At the authorize step: an error redirect, with `iss` (RFC 9207) like every authorization response.
    const authorize = await fetch(
      `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: wrong.clientId,
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 'rt',
        resource: 'https://elsewhere.example/mcp',
      }).toString()}`,
      { redirect: 'manual' },
    );
    const location = new URL(authorize.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('state')).toBe('rt');
    expect(location.searchParams.get('iss')).toBe(stack.baseUrl);

    const flow = await authorizeByHand();
    const key = `e2e-${stack.id}:oauth:code:${createHash('sha256').update(flow.code).digest('hex')}`;
    expect(await redis.pexpire(key, 1)).toBe(1);
    await new Promise((r) => setTimeout(r, 20));
    expect((await flow.exchange()).body.error).toBe('invalid_grant');
  });

  it('remembered consent skips the page when the client asks for no more', async () => {
    const browser = new PretendBrowser(stack.baseUrl);
    const client = await register();
    const url = (scope: string) =>
      `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: String(client.body.client_id),
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        scope,
      }).toString()}`;
    expect((await walkAuthorization(browser, url('dagu:read dagu:execute'), ADMIN)).consentShown).toBe(true);
    expect((await walkAuthorization(browser, url('dagu:read'), ADMIN)).consentShown).toBe(false);
    expect((await walkAuthorization(browser, url('dagu:read dagu:change'), ADMIN)).consentShown).toBe(true);
  });
});

describe('refresh tokens (issue 23 item 4)', () => {
  it('rotate on every use; a rotated token within the grace is replaced, after it revokes the family', async () => {
    const flow = await authorizeByHand();
    const tokens = (await flow.exchange()).body;
    const refresh = (token: unknown) =>
      form(`${stack.baseUrl}/oauth/token`, {
        grant_type: 'refresh_token',
        refresh_token: String(token),
        client_id: flow.clientId,
      });
    const second = await refresh(tokens.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(tokens.refresh_token);
    // Within the 1 s grace the first token is accepted again (a lost response).
    const again = await refresh(tokens.refresh_token);
    expect(again.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1300));
    const reuse = await refresh(tokens.refresh_token);
    expect(reuse.body.error).toBe('invalid_grant');
    // The whole family is gone, the newest token too, and its access tokens stop.
    expect((await refresh(again.body.refresh_token)).body.error).toBe('invalid_grant');
    await within(3000, async () => (await mcpPost(String(again.body.access_token), initialize)).status === 401);
  });
});

describe('scopes (issue 23 item 5)', () => {
  it('a read-only grant gets 403 insufficient_scope on dagu_execute when a consent could grant it (an admin)', async () => {
    const flow = await authorizeByHand({ scope: 'dagu:read' });
    const tokens = (await flow.exchange()).body;
    expect(tokens.scope).toBe('dagu:read');
    const client = new Client({ name: 'scoped', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${String(tokens.access_token)}` } },
    });
    await client.connect(transport);
    const sessionId = transport.sessionId ?? '';
    const res = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${String(tokens.access_token)}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'dagu_execute', arguments: {} },
      }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", scope="dagu:execute", resource_metadata="/,
    );
    await client.close();
  });

  it("a viewer's consent is capped to dagu:read", async () => {
    const flow = await authorizeByHand({ who: VIEWER });
    expect((await flow.exchange()).body.scope).toBe('dagu:read');
  });
});

describe('revocation, introspection, authorizations (issue 23 items 4 and 6)', () => {
  it('introspection reports a live token to its client only; RFC 7009 revocation ends the family', async () => {
    const flow = await authorizeByHand();
    const tokens = (await flow.exchange()).body;
    const live = await form(`${stack.baseUrl}/oauth/introspect`, {
      token: String(tokens.access_token),
      client_id: flow.clientId,
    });
    expect(live.body).toMatchObject({
      active: true,
      client_id: flow.clientId,
      username: 'admin',
      aud: `${stack.baseUrl}/mcp`,
    });
    const other = await register();
    const foreign = await form(`${stack.baseUrl}/oauth/introspect`, {
      token: String(tokens.access_token),
      client_id: String(other.body.client_id),
    });
    expect(foreign.body).toEqual({ active: false });

    const revoked = await form(`${stack.baseUrl}/oauth/revoke`, {
      token: String(tokens.refresh_token),
      client_id: flow.clientId,
    });
    expect(revoked.status).toBe(200);
    const refresh = await form(`${stack.baseUrl}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: flow.clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
    await within(
      3000,
      async () =>
        (
          await form(`${stack.baseUrl}/oauth/introspect`, {
            token: String(tokens.access_token),
            client_id: flow.clientId,
          })
        ).body.active === false,
    );
  });

  it('issue on one replica, refresh on the other, revoke on the other: the access token stops on both within the bound', async () => {
    const [a, b] = stack.gateways;
    if (a === undefined || b === undefined) throw new Error('two replicas expected');
    const flow = await authorizeByHand({ base: a.url });
    const tokens = (await flow.exchange({}, a.url)).body;
    expect(tokens.access_token).toBeDefined();
    const refreshed = await form(`${b.url}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: flow.clientId,
    });
    expect(refreshed.status).toBe(200);
    const access = String(refreshed.body.access_token);
    expect((await mcpPost(access, initialize, `${a.url}/mcp`)).status).toBe(200);
    expect((await mcpPost(access, initialize, `${b.url}/mcp`)).status).toBe(200);

    // The JSON API of the authorizations page, with the browser session and its CSRF token.
    const session = (await flow.browser.get('/api/v1/session')).text;
    const csrf = String((JSON.parse(session) as { csrfToken: string }).csrfToken);
    const list = await fetch(`${b.url}/api/mcp/authorizations`, {
      headers: { cookie: `dagu_session=${flow.browser.cookie('dagu_session') ?? ''}` },
    });
    const entries = ((await list.json()) as { authorizations: Array<Record<string, unknown>> }).authorizations;
    expect(entries.find((e) => e.clientId === flow.clientId)).toMatchObject({
      clientName: 'raw client',
      username: 'admin',
      tokenCount: 1,
    });
    const noCsrf = await fetch(`${b.url}/api/mcp/authorizations/${flow.clientId}`, {
      method: 'DELETE',
      headers: { cookie: `dagu_session=${flow.browser.cookie('dagu_session') ?? ''}` },
    });
    expect(noCsrf.status).toBe(403);
    const del = await fetch(`${b.url}/api/mcp/authorizations/${flow.clientId}`, {
      method: 'DELETE',
      headers: { cookie: `dagu_session=${flow.browser.cookie('dagu_session') ?? ''}`, 'x-csrf-token': csrf },
    });
    expect(await del.json()).toEqual({ ok: true, message: 'Authorizations revoked' });
    const refreshAfter = await form(`${a.url}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: String(refreshed.body.refresh_token),
      client_id: flow.clientId,
    });
    expect(refreshAfter.body.error).toBe('invalid_grant');
    // OAUTH_REVOCATION_CHECK_MS=1000: both replicas refuse within about a second.
    const took = await within(
      3000,
      async () =>
        (await mcpPost(access, initialize, `${a.url}/mcp`)).status === 401 &&
        (await mcpPost(access, initialize, `${b.url}/mcp`)).status === 401,
    );
    expect(took).toBeLessThanOrEqual(2000);
  });
});

describe('the JSON authorize endpoints for a separate front end (issue 23 item 3)', () => {
  it('GET describes the request; POST with the CSRF token allows (code, state, iss) or denies', async () => {
    const signedIn = await authorizeByHand(); // leaves a signed-in browser
    const cookie = `dagu_session=${signedIn.browser.cookie('dagu_session') ?? ''}`;
    const csrf = String(
      (JSON.parse((await signedIn.browser.get('/api/v1/session')).text) as { csrfToken: string }).csrfToken,
    );
    const client = await register({ client_name: 'SPA client' });
    const { verifier, challenge } = pkce();
    const params = {
      client_id: String(client.body.client_id),
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'js-1',
      scope: 'dagu:read',
    };
    const prompt = await fetch(`${stack.baseUrl}/api/mcp/authorize?${new URLSearchParams(params).toString()}`, {
      headers: { cookie },
    });
    expect(await prompt.json()).toMatchObject({
      client: { clientId: params.client_id, clientName: 'SPA client', scope: 'dagu:read' },
      user: { username: 'admin' },
      params: { redirectUri: REDIRECT, codeChallengeMethod: 'S256', state: 'js-1' },
    });
    const post = (headers: Record<string, string>, action: string) =>
      fetch(`${stack.baseUrl}/api/mcp/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, ...headers },
        body: JSON.stringify({ ...params, action }),
      });
    expect((await post({}, 'allow')).status).toBe(403);
    const denied = (await (await post({ 'x-csrf-token': csrf }, 'deny')).json()) as {
      ok: boolean;
      redirectUrl: string;
    };
    expect(denied.ok).toBe(false);
    expect(new URL(denied.redirectUrl).searchParams.get('error')).toBe('access_denied');
    const allowed = (await (await post({ 'x-csrf-token': csrf }, 'allow')).json()) as {
      ok: boolean;
      redirectUrl: string;
    };
    const redirect = new URL(allowed.redirectUrl);
    expect(allowed.ok).toBe(true);
    expect(redirect.searchParams.get('iss')).toBe(stack.baseUrl);
    const tokens = await form(`${stack.baseUrl}/oauth/token`, {
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code') ?? '',
      client_id: params.client_id,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    expect(tokens.body.scope).toBe('dagu:read');
  });
});

describe('existing credentials (issue 23 item 7)', () => {
  it('login tokens and Basic still work on /mcp', async () => {
    const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
    expect((await mcpPost(String(login.body?.token), initialize)).status).toBe(200);
    const basic = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}`,
      },
      body: JSON.stringify(initialize),
    });
    expect(basic.status).toBe(200);
  });
});

describe('Client ID Metadata Documents (issue 23 item 2)', () => {
  const authorizeUrl = (clientId: string, redirect = REDIRECT) =>
    `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }).toString()}`;

  it('an https client_id is fetched and used through consent and token exchange', async () => {
    const clientId = `${documentsUrl}/clients/good.json`;
    served.set('/clients/good.json', { client_id: clientId, client_name: 'Doc Client', redirect_uris: [REDIRECT] });
    const { verifier, challenge } = pkce();
    const url = `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()}`;
    const browser = new PretendBrowser(stack.baseUrl);
    const page = await browser.get(url);
    expect(page.status).toBe(303); // to sign-in
    const { redirect } = await walkAuthorization(browser, url, ADMIN);
    const tokens = await form(`${stack.baseUrl}/oauth/token`, {
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code') ?? '',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('Bearer');
  });

  it('a document whose client_id differs from its URL is refused', async () => {
    const clientId = `${documentsUrl}/clients/liar.json`;
    served.set('/clients/liar.json', { client_id: `${documentsUrl}/clients/other.json`, redirect_uris: [REDIRECT] });
    const res = await fetch(authorizeUrl(clientId), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('a document with a forbidden redirect URI is refused', async () => {
    const clientId = `${documentsUrl}/clients/bad-redirect.json`;
    served.set('/clients/bad-redirect.json', { client_id: clientId, redirect_uris: ['http://attacker.example/cb'] });
    const res = await fetch(authorizeUrl(clientId, 'http://attacker.example/cb'), { redirect: 'manual' });
    expect(res.status).toBe(400);
  });
});
