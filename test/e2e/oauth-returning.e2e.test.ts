/**
 * The returning person (issue 41 item 5): a person whose browser session is gone comes back
 * through an MCP client's authorization, signs in, and lands on the client's loopback
 * callback — with a remembered consent (sign-in → `/oauth/authorize` → 302 to the client,
 * a redirect the sign-in page's CSP `form-action` must allow) and without one (sign-in →
 * consent → Authorize → callback). Real Chromium through playwright-core, two gateway
 * replicas behind the round-robin proxy. The sign-in page's CSP names exactly the validated
 * redirect target of the pending authorization, on the form and on the form shown again
 * after a wrong password; nothing broader, and plain `'self'` for any other `next`.
 * Screenshots: test/e2e/screenshots/oauth-returning-*.png.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { launchBrowser, saveScreenshot } from './browser';
import { PretendBrowser, walkAuthorization } from './oauth-http';
import { restCall } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const PERSON = { username: 'rosa', password: 'returning-password-123' };
let stack: Stack;
let browser: Browser;
/** The client's loopback redirect listener on a random port (RFC 8252 §7.3). */
let callback: Server;
let callbackPort: number;
const received: URL[] = [];
const contexts: BrowserContext[] = [];

const callbackUri = (): string => `http://127.0.0.1:${callbackPort}/callback`;

async function register(name: string): Promise<string> {
  const res = await fetch(`${stack.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1/callback'] }),
  });
  expect(res.status).toBe(201);
  return String(((await res.json()) as { client_id: string }).client_id);
}

function authorizeUrl(clientId: string, state: string): string {
  const verifier = randomBytes(32).toString('base64url');
  return `${stack.baseUrl}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callbackUri(),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    resource: stack.mcpUrl,
  }).toString()}`;
}

/** The request the callback listener got with `state`, waiting up to `ms`; undefined if none came. */
async function callbackWith(state: string, ms = 10_000): Promise<URL | undefined> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    const hit = received.find((u) => u.searchParams.get('state') === state);
    if (hit !== undefined) return hit;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

/** A fresh browser (no cookies: the person's session is gone), keeping its CSP complaints for the failure message. */
async function freshPage(): Promise<{ page: Page; console: string[] }> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  const console: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) console.push(message.text());
  });
  return { page, console };
}

/** The `form-action` directive of a page's CSP. */
function formActionOf(response: PageResponse | null): string {
  const csp = response?.headers()['content-security-policy'] ?? '';
  return /form-action ([^;]*)/.exec(csp)?.[1]?.trim() ?? `(no form-action in "${csp}")`;
}

/** Fills and submits the sign-in form; resolves with the answer to the POST. */
async function submitSignIn(page: Page, password: string): Promise<PageResponse> {
  await page.fill('input[name="username"]', PERSON.username);
  await page.fill('input[name="password"]', password);
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/signin'),
    page.press('input[name="password"]', 'Enter'),
  ]);
  return answer;
}

beforeAll(async () => {
  callback = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>Client callback</title><h1>The client got the answer</h1>');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackPort = (callback.address() as AddressInfo).port;
  [stack, browser] = await Promise.all([
    startStack(
      {
        AUTH_MODE: 'builtin',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
      },
      { gatewayReplicas: 2, publicUrl: true },
    ),
    launchBrowser(),
  ]);
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  const created = await restCall(stack.baseUrl, '/users', {
    method: 'POST',
    token: String(login.body?.token),
    body: { ...PERSON, role: 'operator' },
  });
  expect(created.status).toBe(201);
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  callback?.close();
  await stack?.stop();
});

describe('a returning person in a fresh browser (issue 41 item 5)', () => {
  it('with a remembered consent: sign-in lands on the client callback with code and state', async () => {
    const clientId = await register('Returning Client');
    // The person authorized this client before (another browser, long ago): a remembered consent.
    const before = await walkAuthorization(new PretendBrowser(stack.baseUrl), authorizeUrl(clientId, 'first'), PERSON);
    expect(before.consentShown).toBe(true);
    expect(before.redirect.searchParams.get('code')).toBeTruthy();

    const { page, console } = await freshPage();
    const signin = await page.goto(authorizeUrl(clientId, 'again-1'));
    expect(new URL(page.url()).pathname).toBe('/signin');
    // Exactly the validated redirect target of the pending authorization, nothing broader.
    expect(formActionOf(signin)).toBe(`'self' ${callbackUri()}`);
    expect(signin?.headers()['content-security-policy']).not.toContain('*');
    await saveScreenshot(page, 'oauth-returning-signin');

    await submitSignIn(page, PERSON.password);
    const hit = await callbackWith('again-1');
    await saveScreenshot(page, 'oauth-returning-landed');
    expect({ landed: hit?.pathname, console }).toEqual({ landed: '/callback', console: [] });
    expect(hit?.searchParams.get('code')).toBeTruthy();
    expect(hit?.searchParams.get('iss')).toBe(stack.baseUrl);
    expect(page.url()).toBe(hit === undefined ? '' : `${callbackUri()}${hit.search}`);
  }, 60_000);

  it('without one: sign-in (after a wrong password) → consent → Authorize → callback', async () => {
    const clientId = await register('New Client');
    const { page, console } = await freshPage();
    const signin = await page.goto(authorizeUrl(clientId, 'new-1'));
    expect(formActionOf(signin)).toBe(`'self' ${callbackUri()}`);

    // The form shown again after a failed sign-in keeps the target: its next POST redirects the same way.
    const wrong = await submitSignIn(page, 'not-the-password');
    expect(wrong.status()).toBe(401);
    expect(formActionOf(wrong)).toBe(`'self' ${callbackUri()}`);
    expect(await page.textContent('[role="alert"]')).toMatch(/wrong/i);
    await saveScreenshot(page, 'oauth-returning-wrong-password');

    await submitSignIn(page, PERSON.password);
    await page.waitForSelector('button[value="allow"]');
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    expect(await page.textContent('body')).toContain('New Client');
    await saveScreenshot(page, 'oauth-returning-consent');
    await page.click('button[value="allow"]');
    const hit = await callbackWith('new-1');
    await saveScreenshot(page, 'oauth-returning-authorized');
    expect({ landed: hit?.pathname, console }).toEqual({ landed: '/callback', console: [] });
    expect(hit?.searchParams.get('code')).toBeTruthy();
  }, 60_000);

  it("any other next keeps plain 'self': a foreign path, an unknown client, an unregistered redirect", async () => {
    const clientId = await register('Other Client');
    const formAction = async (next: string): Promise<string> => {
      const res = await fetch(`${stack.baseUrl}/signin?next=${encodeURIComponent(next)}`);
      await res.body?.cancel();
      return /form-action ([^;]*)/.exec(res.headers.get('content-security-policy') ?? '')?.[1]?.trim() ?? '';
    };
    const path = (url: string): string => {
      const u = new URL(url);
      return `${u.pathname}${u.search}`;
    };
    expect(await formAction(path(authorizeUrl(clientId, 'x')))).toBe(`'self' ${callbackUri()}`);
    expect(await formAction('/')).toBe("'self'");
    expect(await formAction(path(authorizeUrl('no-such-client', 'x')))).toBe("'self'");
    const foreign = new URL(authorizeUrl(clientId, 'x'));
    foreign.searchParams.set('redirect_uri', 'https://evil.example/callback');
    expect(await formAction(path(foreign.href))).toBe("'self'");
    // A path that only looks like the authorize endpoint is not it.
    expect(await formAction(path(authorizeUrl(clientId, 'x')).replace('/oauth/authorize', '/oauth/authorize/x'))).toBe(
      "'self'",
    );
  });
});
