import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { SecretBox } from '@dagu-mcp/runtime';
import { openGatewayTestDb, type GatewayTestDb } from '../auth/auth-db.test-support';
import { UserRepository } from '../auth/user.repository';
import { oauthRouter } from '../routes/oauth.routes';
import { createOAuthServer, type OAuthServer } from './oauth-server';

/**
 * The authorization server against the real PostgreSQL and Redis, behind the
 * SDK's handlers over HTTP: code exchange, rotation with
 * grace and reuse detection, revocation, role caps, storage at rest.
 * The sign-in and consent pages are covered end to end in test/e2e.
 */
let db: GatewayTestDb;
let redis: Redis;
let server: OAuthServer;
let http: Server;
let base: string;
let userId: string;
const prefix = `oauth-it-${randomBytes(4).toString('hex')}`;
const REDIRECT = 'http://127.0.0.1:5555/cb';

beforeAll(async () => {
  db = await openGatewayTestDb('oauth_it');
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const users = new UserRepository(db.pool);
  userId = (await users.create({ username: 'dev', role: 'developer', passwordHash: 'x' })).id;
  const box = new SecretBox([{ id: 'k1', key: randomBytes(32) }]);
  const app = express();
  http = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  server = createOAuthServer({
    pool: db.pool,
    redis,
    box,
    users,
    settings: {
      publicUrl: base,
      accessTokenTtlSeconds: 3600,
      refreshTokenTtlSeconds: 3600,
      refreshGraceSeconds: 1,
      revocationCheckMs: 0,
      signingKeyRotationDays: 30,
      metadataDocumentHosts: [],
      metadataDocumentAllowPrivate: false,
      prefix,
      userCacheMs: 0,
    },
  });
  app.use(oauthRouter(server, '', express.Router()));
});

afterAll(async () => {
  http?.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
  await db?.close();
});

const form = async (path: string, body: Record<string, string>) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A registered client and a code as the consent page would issue it. */
async function consented(scope = 'dagu:read dagu:change dagu:execute') {
  const reg = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'it', redirect_uris: [REDIRECT] }),
  });
  const clientId = String(((await reg.json()) as { client_id: string }).client_id);
  const verifier = randomBytes(32).toString('base64url');
  const grantId = await server.grants.upsert({
    userId,
    clientId,
    clientName: 'it',
    scope,
    resources: [server.addresses.mcpResource],
  });
  const code = await server.codes.issue({
    clientId,
    redirectUri: REDIRECT,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    scope,
    resource: `${base}/mcp`,
    userId,
    grantId,
  });
  const exchange = () =>
    form('/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
  return { clientId, code, grantId, exchange };
}

const refresh = (clientId: string, token: unknown) =>
  form('/oauth/token', { grant_type: 'refresh_token', refresh_token: String(token), client_id: clientId });

test('a code exchange issues a verifiable JWT for the resource and a hashed refresh token', async () => {
  const flow = await consented();
  const tokens = (await flow.exchange()).body;
  expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'dagu:read dagu:change dagu:execute' });
  const access = await server.provider.verifyAccess(String(tokens.access_token), `${base}/mcp`);
  expect(access?.principal).toEqual({
    id: `user:${userId}`,
    subject: 'dev',
    role: 'developer',
    credentialType: 'oauth',
  });
  expect(await server.provider.verifyAccess(String(tokens.access_token), `${base}/other`)).toBeUndefined();

  const stored = await db.pool.query<{ token_hash: string }>('SELECT token_hash FROM oauth_refresh_tokens');
  expect(stored.rows.map((r) => r.token_hash)).not.toContain(tokens.refresh_token);
  expect(stored.rows.map((r) => r.token_hash)).toContain(
    createHash('sha256').update(String(tokens.refresh_token)).digest('hex'),
  );
  const keys = await db.pool.query<{ private_enc: string; public_jwk: Record<string, unknown> }>(
    'SELECT private_enc, public_jwk FROM oauth_signing_keys',
  );
  expect(keys.rows[0]?.private_enc).toMatch(/^dsec1\./);
  expect(keys.rows[0]?.public_jwk).not.toHaveProperty('d');
  expect(await redis.keys(`${prefix}:oauth:code:${flow.code}`)).toEqual([]);
});

test('a replayed code is refused and revokes what the first exchange issued', async () => {
  const flow = await consented();
  const first = (await flow.exchange()).body;
  expect((await flow.exchange()).body.error).toBe('invalid_grant');
  expect((await refresh(flow.clientId, first.refresh_token)).body.error).toBe('invalid_grant');
  expect(await server.provider.verifyAccess(String(first.access_token), `${base}/mcp`)).toBeUndefined();
});

test('refresh rotates; reuse within the grace is replaced, after it revokes the family', async () => {
  const flow = await consented();
  const first = (await flow.exchange()).body;
  const second = (await refresh(flow.clientId, first.refresh_token)).body;
  expect(second.refresh_token).not.toEqual(first.refresh_token);
  const again = (await refresh(flow.clientId, first.refresh_token)).body;
  expect(again.refresh_token).toBeDefined();
  expect((await refresh(flow.clientId, second.refresh_token)).body.error).toBe('invalid_grant'); // replaced
  await new Promise((r) => setTimeout(r, 1100));
  expect((await refresh(flow.clientId, first.refresh_token)).body.error).toBe('invalid_grant');
  expect((await refresh(flow.clientId, again.refresh_token)).body.error).toBe('invalid_grant');
  expect(await server.provider.verifyAccess(String(again.access_token), `${base}/mcp`)).toBeUndefined();
});

test("scopes follow the user's live role; revoking the grant ends its tokens", async () => {
  const flow = await consented();
  const tokens = (await flow.exchange()).body;
  const users = new UserRepository(db.pool);
  await users.update(userId, { role: 'viewer' });
  expect((await server.provider.verifyAccess(String(tokens.access_token), `${base}/mcp`))?.scopes).toEqual([
    'dagu:read',
  ]);
  expect((await refresh(flow.clientId, tokens.refresh_token)).body.scope).toBe('dagu:read');
  await users.update(userId, { role: 'developer' });

  const listed = await server.grants.list(userId);
  expect(listed.find((g) => g.clientId === flow.clientId)).toMatchObject({ username: 'dev', tokenCount: 1 });
  expect(await server.provider.revokeAuthorization(flow.clientId, userId)).toBe(1);
  expect(await server.provider.verifyAccess(String(tokens.access_token), `${base}/mcp`)).toBeUndefined();
});

test('introspection answers the holding client only (RFC 7662)', async () => {
  const flow = await consented('dagu:read');
  const tokens = (await flow.exchange()).body;
  const res = await form('/oauth/introspect', { token: String(tokens.access_token), client_id: flow.clientId });
  expect(res.body).toMatchObject({ active: true, scope: 'dagu:read', client_id: flow.clientId, sub: userId });
  const revoke = await form('/oauth/revoke', { token: String(tokens.access_token), client_id: flow.clientId });
  expect(revoke.status).toBe(200);
  expect(
    (await form('/oauth/introspect', { token: String(tokens.access_token), client_id: flow.clientId })).body,
  ).toEqual({ active: false });
});

describe('PKCE failures and error descriptions', () => {
  test('a token request that fails PKCE verification uses the code up: the right verifier then gets invalid_grant', async () => {
    const flow = await consented();
    const wrong = await form('/oauth/token', {
      grant_type: 'authorization_code',
      code: flow.code,
      client_id: flow.clientId,
      redirect_uri: REDIRECT,
      code_verifier: randomBytes(32).toString('base64url'),
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const right = await flow.exchange();
    expect(right).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  test.each([
    ['token, code_verifier missing', '/oauth/token', { grant_type: 'authorization_code', code: 'x' }, 'code_verifier'],
    ['token, grant_type missing', '/oauth/token', {}, 'grant_type'],
    ['revoke, token missing', '/oauth/revoke', {}, 'token'],
  ])('%s: error_description is one readable sentence, no validation dump', async (_name, path, extra, field) => {
    const flow = await consented();
    const answer = await form(path, { client_id: flow.clientId, ...extra });
    expect(answer.status).toBe(400);
    const description = String(answer.body.error_description);
    expect(description).toContain(field);
    expect(description).toMatch(/^[A-Z][^\n{}[\]"]*\.$/);
  });

  test('client authentication with no client_id: one readable sentence', async () => {
    const answer = await form('/oauth/token', { grant_type: 'authorization_code' });
    expect(answer.status).toBe(400);
    expect(String(answer.body.error_description)).toMatch(/^[A-Z][^\n{}[\]"]*client_id[^\n{}[\]"]*\.$/);
  });

  test('an authorize request without a PKCE challenge is redirected with one readable sentence', async () => {
    const flow = await consented();
    const url = `${base}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: flow.clientId,
      redirect_uri: REDIRECT,
      state: 's',
    }).toString()}`;
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/^[A-Z][^\n{}[\]"]*code_challenge[^\n{}[\]"]*\.$/);
  });
});
