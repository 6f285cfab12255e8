/**
 * The OAuth pages in a real browser (issue 23 "Tests — Real browser"): Debian's
 * Chromium through playwright-core (test/e2e/browser.ts) walks register →
 * authorize → sign in → consent → code → token → tools/list → refresh → revoke
 * on the authorizations page → the next call fails; also Deny, a wrong
 * password, a missing CSRF token, and a loopback redirect on a random port.
 * Screenshots of the sign-in, consent and authorizations pages go to
 * test/e2e/screenshots/.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { launchBrowser, saveScreenshot } from './browser';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let browser: Browser;
/** The client's loopback redirect listener on a random port (RFC 8252 §7.3). */
let callback: Server;
let callbackPort: number;
const received: URL[] = [];

async function register(): Promise<string> {
  const res = await fetch(`${stack.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Browser Test Client', redirect_uris: ['http://127.0.0.1/callback'] }),
  });
  expect(res.status).toBe(201);
  return String(((await res.json()) as { client_id: string }).client_id);
}

function authorizeUrl(clientId: string, challenge: string, state: string): string {
  return `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: `http://127.0.0.1:${callbackPort}/callback`,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    resource: stack.mcpUrl,
  }).toString()}`;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function token(body: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function signIn(page: Page, password: string): Promise<void> {
  await page.fill('input[name="username"]', ADMIN.username);
  await page.fill('input[name="password"]', password);
  await Promise.all([page.waitForLoadState('load'), page.press('input[name="password"]', 'Enter')]);
}

/** Waits until the callback listener got a request whose state is `state`. */
async function callbackWith(state: string): Promise<URL> {
  for (let i = 0; i < 100; i++) {
    const hit = received.find((u) => u.searchParams.get('state') === state);
    if (hit !== undefined) return hit;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no callback with state ${state}`);
}

beforeAll(async () => {
  callback = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', `http://127.0.0.1`));
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>Client</title><p>You can close this window.</p>');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackPort = (callback.address() as AddressInfo).port;
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    OAUTH_REVOCATION_CHECK_MS: '1000',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
  });
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  callback?.close();
  await stack?.stop();
});

describe('OAuth pages in Chromium', () => {
  let page: Page;
  beforeAll(async () => {
    page = await (await browser.newContext()).newPage();
  });

  it('register → sign in (after a wrong password) → consent → code → token → tools/list → refresh → revoke → refused', async () => {
    const clientId = await register();
    const { verifier, challenge } = pkce();
    await page.goto(authorizeUrl(clientId, challenge, 'walk-1'));
    expect(new URL(page.url()).pathname).toBe('/signin');
    await saveScreenshot(page, 'oauth-signin');

    await signIn(page, 'not-the-password');
    expect(await page.textContent('body')).toMatch(/incorrect|invalid|wrong/i);
    await signIn(page, ADMIN.password);

    // Consent: names the client (unverified), the redirect host, the account and the scopes.
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    const consent = (await page.textContent('body')) ?? '';
    expect(consent).toContain('Browser Test Client');
    expect(consent).toMatch(/unverified/i);
    expect(consent).toContain(`127.0.0.1:${callbackPort}`);
    expect(consent).toContain('admin');
    expect(consent).toContain('dagu:execute');
    await saveScreenshot(page, 'oauth-consent');
    await page.click('button[value="allow"]');
    const redirect = await callbackWith('walk-1');
    expect(redirect.searchParams.get('iss')).toBe(stack.baseUrl);

    const tokens = await token({
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code') ?? '',
      client_id: clientId,
      redirect_uri: `http://127.0.0.1:${callbackPort}/callback`,
      code_verifier: verifier,
      resource: stack.mcpUrl,
    });
    expect(tokens.status).toBe(200);
    const client = new Client({ name: 'browser-walk', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${String(tokens.body.access_token)}` } },
      }),
    );
    expect((await client.listTools()).tools.length).toBeGreaterThanOrEqual(3);
    await client.close();

    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: String(tokens.body.refresh_token),
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);

    await page.goto(`${stack.baseUrl}/oauth/authorizations`);
    expect(await page.textContent('body')).toContain('Browser Test Client');
    await saveScreenshot(page, 'oauth-authorizations');
    await page.click(`form:has(input[name="clientId"][value="${clientId}"]) button`);
    await page.waitForLoadState('load');
    expect(await page.textContent('body')).not.toContain('Browser Test Client');

    const after = await token({
      grant_type: 'refresh_token',
      refresh_token: String(refreshed.body.refresh_token),
      client_id: clientId,
    });
    expect(after.body.error).toBe('invalid_grant');
    const access = String(refreshed.body.access_token);
    let status = 0;
    for (let i = 0; i < 30 && status !== 401; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (
        await fetch(stack.mcpUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${access}`,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
          }),
        })
      ).status;
    }
    expect(status).toBe(401);
  }, 60_000);

  it('Deny sends access_denied to the client', async () => {
    const clientId = await register();
    await page.goto(authorizeUrl(clientId, pkce().challenge, 'deny-1'));
    await page.click('button[value="deny"]');
    const redirect = await callbackWith('deny-1');
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    expect(redirect.searchParams.get('code')).toBeNull();
  });

  it('a consent form without its CSRF token is refused', async () => {
    const clientId = await register();
    await page.goto(authorizeUrl(clientId, pkce().challenge, 'csrf-1'));
    await page.locator('input[name="csrf"]').evaluate((input: { remove(): void }) => input.remove());
    await page.click('button[value="allow"]');
    await page.waitForLoadState('load');
    expect(await page.textContent('body')).toMatch(/CSRF/);
    expect(received.find((u) => u.searchParams.get('state') === 'csrf-1')).toBeUndefined();
  });
});
