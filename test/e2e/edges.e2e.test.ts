/**
 * The transport's edges as an attacker tried them (issue 42 items 3–5; docs/security.md
 * "Edges of the transport"), against the built stack in AUTH_MODE=builtin with OAuth, three
 * gateway replicas (one with short HTTP timeouts) and a Redis of the test's own (stopped for
 * the outage case):
 *
 * - every JSON-RPC error keeps the request's id: during a Redis outage the official SDK client
 *   gets `resource_unavailable` naming Redis, never an answer it cannot parse (`invalid_union`);
 * - `MCP_SESSIONS_PER_PRINCIPAL_MAX` holds exactly under 200 concurrent `initialize` calls;
 * - a client that sends its headers or body slowly is disconnected (`HTTP_HEADERS_TIMEOUT_MS`,
 *   `HTTP_REQUEST_TIMEOUT_MS`);
 * - a token request that fails PKCE uses the authorization code up, and OAuth error
 *   descriptions are one readable sentence.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../../packages/runtime/test-fixtures/throwaway-redis';
import { PretendBrowser, walkAuthorization } from './oauth-http';
import { restCall } from './rest-call';
import { connectClient, freePort, startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 3000;
const SESSIONS_MAX = 20;
/** Node looks for late requests once a second (http/server-timeouts.ts); the rest is a loaded machine's slack. */
const CLOSE_SLACK_MS = 3000;
const REDIRECT = 'http://127.0.0.1:47124/callback';

let redis: ThrowawayRedis;
let stack: Stack;
let token: string;
let secondGateway: string;
/** A replica with HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS. */
let strictGateway: string;

beforeAll(async () => {
  redis = await startThrowawayRedis();
  stack = await startStack(
    {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      REDIS_URL: redis.url,
      MCP_SESSIONS_PER_PRINCIPAL_MAX: String(SESSIONS_MAX),
    },
    { publicUrl: true },
  );
  token = String((await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN })).body?.token);
  secondGateway = await spawnGateway({});
  // Its own replica: timeouts this short would also cut off the 200 concurrent initializes above.
  strictGateway = await spawnGateway({
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  });
}, 120_000);

/** One more gateway replica of the stack; resolves with its URL once it answers. */
async function spawnGateway(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  await stack.spawnApp('mcp-gateway', { PORT: String(port), ...env });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && (await fetch(`${url}/healthz`).catch(() => undefined))?.status !== 200; i++)
    await new Promise((r) => setTimeout(r, 100));
  return url;
}

afterAll(async () => {
  if (redis !== undefined && !redis.running) await redis.start();
  await stack?.stop();
  await redis?.stop();
});

const initializeBody = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'edges', version: '1' } },
});

const mcpHeaders = (): Record<string, string> => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

describe('MCP_SESSIONS_PER_PRINCIPAL_MAX holds under concurrency (issue 42 item 4)', () => {
  test(`200 concurrent initializes over two replicas against ${SESSIONS_MAX}: exactly ${SESSIONS_MAX} open`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await fetch(`${i % 2 === 0 ? stack.baseUrl : secondGateway}/mcp`, {
          method: 'POST',
          headers: mcpHeaders(),
          body: JSON.stringify(initializeBody(i)),
        });
        await res.text();
        return { status: res.status, session: res.headers.get('mcp-session-id') };
      }),
    );
    const opened = answers.flatMap((a) => (a.status === 200 && a.session !== null ? [a.session] : []));
    // End them whatever the outcome: the principal's other tests need sessions of their own.
    for (const session of opened)
      await fetch(stack.mcpUrl, { method: 'DELETE', headers: { ...mcpHeaders(), 'mcp-session-id': session } });
    const byStatus: Record<string, number> = {};
    for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
    expect(byStatus).toEqual({ 200: SESSIONS_MAX, 429: 200 - SESSIONS_MAX });
  });
});

/** Opens a socket and sends a request too slowly; resolves with how long the gateway kept it open (capped). */
function slowRequest(kind: 'headers' | 'body', capMs: number): Promise<{ openMs: number; answer: string }> {
  const port = Number(new URL(strictGateway).port);
  const socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.on('error', () => undefined);
  socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
  if (kind === 'body')
    socket.write(
      `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        'Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{',
    );
  // A byte of a header line, or of the body, every 200 ms: never enough to finish.
  const drip = setInterval(() => socket.write(kind === 'headers' ? 'X-Slow: a\r\n' : ' '), 200);
  return new Promise((resolve) => {
    const cap = setTimeout(() => socket.destroy(), capMs);
    socket.on('close', () => {
      clearInterval(drip);
      clearTimeout(cap);
      const openMs = Date.now() - started;
      resolve({ openMs: openMs >= capMs ? Infinity : openMs, answer });
    });
  });
}

describe('slow clients are disconnected (issue 42 item 4)', () => {
  test('a socket that sends its headers slowly is closed within HTTP_HEADERS_TIMEOUT_MS, with 408', async () => {
    const slow = await slowRequest('headers', HEADERS_TIMEOUT_MS + CLOSE_SLACK_MS + 5000);
    expect(slow.openMs).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + CLOSE_SLACK_MS);
    expect(slow.answer).toMatch(/^HTTP\/1\.1 408/);
  });

  test('a socket that sends its body slowly is closed within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const slow = await slowRequest('body', REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS + 5000);
    expect(slow.openMs).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS);
  });
});

const form = async (path: string, body: Record<string, string>) => {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A registered client, and a code the admin consented to, by hand (oauth.e2e.test.ts shows the rest). */
async function authorizationCode(): Promise<{ clientId: string; code: string; verifier: string }> {
  const registered = await fetch(`${stack.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'edges', redirect_uris: [REDIRECT] }),
  });
  const clientId = String(((await registered.json()) as { client_id: unknown }).client_id);
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${stack.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'edges',
    resource: `${stack.baseUrl}/mcp`,
  }).toString();
  const { redirect } = await walkAuthorization(new PretendBrowser(stack.baseUrl), url.href, ADMIN);
  return { clientId, code: redirect.searchParams.get('code') ?? '', verifier };
}

/** One readable sentence: a capital, no JSON, no line break, a closing period. */
const SENTENCE = /^[A-Z][^\n{}[\]"]*\.$/;

describe('OAuth (issue 42 item 4)', () => {
  test('a token request that fails PKCE verification uses the code up: the right verifier then gets invalid_grant', async () => {
    const { clientId, code, verifier } = await authorizationCode();
    const exchange = (codeVerifier: string) =>
      form('/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_verifier: codeVerifier,
        resource: `${stack.baseUrl}/mcp`,
      });
    const guessed = await exchange(randomBytes(32).toString('base64url'));
    expect(guessed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(String(guessed.body.error_description)).toMatch(SENTENCE);
    const right = await exchange(verifier);
    expect(right).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  test('a token request without a code_verifier: the description is one sentence naming it, not a validation dump', async () => {
    const { clientId, code } = await authorizationCode();
    const answer = await form('/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId });
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(String(answer.body.error_description)).toMatch(SENTENCE);
    expect(String(answer.body.error_description)).toContain('code_verifier');
  });
});

describe('a Redis outage, seen by the official SDK client (issue 42 item 3)', () => {
  let client: Client;

  beforeAll(async () => {
    client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${token}` });
  });

  afterAll(async () => {
    await client?.close();
  });

  test('tools/call is an isError result and tools/list a -32005 error, both resource_unavailable naming Redis', async () => {
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await redis.stop();
    try {
      // Past the failure limiter's one-second memo of the address: authentication asks Redis.
      await new Promise((r) => setTimeout(r, 1500));
      const call = await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } }, undefined, {
        timeout: 15_000,
      });
      expect(call.isError).toBe(true);
      expect(call.structuredContent).toMatchObject({
        code: 'resource_unavailable',
        message: expect.stringContaining('Redis') as unknown,
        details: { dependency: 'redis' },
      });
      const list = await client.listTools(undefined, { timeout: 15_000 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(list).toBeInstanceOf(McpError);
      expect(list).toMatchObject({ code: -32005, message: expect.stringContaining('Redis') as unknown });
    } finally {
      await redis.start();
    }
  });
});
