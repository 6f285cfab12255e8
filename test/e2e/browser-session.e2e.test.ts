/**
 * Browser sessions end to end (docs/security.md "Browser sessions"; the sign-in that the
 * OAuth authorize page and the console share): two gateway replicas behind the round-robin
 * proxy, the sign-in page in real Chromium, the session cookie on `/api/v1` with its CSRF
 * rule, never on `/mcp`, and the user's live role.
 */
import type { Browser } from 'playwright-core';
import { launchBrowser, saveScreenshot } from './browser';
import { restCall } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let browser: Browser;
let adminToken: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startStack(
      {
        AUTH_MODE: 'builtin',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        LOGIN_MAX_FAILURES_PER_USER: '3',
        LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
      },
      { gatewayReplicas: 2 },
    ),
    launchBrowser(),
  ]);
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  adminToken = String(login.body?.token);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function createUser(username: string, role: string, password: string): Promise<string> {
  const res = await restCall(stack.baseUrl, '/users', {
    method: 'POST',
    token: adminToken,
    body: { username, role, password },
  });
  expect(res.status).toBe(201);
  return String(res.body?.id);
}

/** Opens the sign-in form (its CSRF cookie and field) and posts `fields` with them; the raw answer. */
async function postSignInForm(fields: Record<string, string>): Promise<Response> {
  const form = await fetch(`${stack.baseUrl}/signin`);
  const formCookie = (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  return fetch(`${stack.baseUrl}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({ ...fields, csrf }).toString(),
  });
}

/** Signs in through the form over plain HTTP; returns the `dagu_session` cookie pair. */
async function signInOverHttp(username: string, password: string): Promise<string> {
  const res = await postSignInForm({ username, password, next: '/' });
  expect(res.status).toBe(303);
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => c.startsWith('dagu_session='));
  expect(session).toBeDefined();
  return session ?? '';
}

test('signing in on the page sets an HttpOnly SameSite=Lax cookie; the page reads its CSRF token and the user', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/signin?next=/api/v1/session`);
  await saveScreenshot(page, 'signin');
  expect(await page.title()).toContain('Sign in');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill('wrong-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toContain('Wrong username or password');
  await saveScreenshot(page, 'signin-error');

  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/api\/v1\/session$/);
  const session = JSON.parse((await page.textContent('body')) ?? '{}') as Record<string, unknown>;
  expect(session.user).toMatchObject({ username: 'admin', role: 'admin' });
  expect(typeof session.csrfToken).toBe('string');

  const cookie = (await context.cookies()).find((c) => c.name === 'dagu_session');
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
  await context.close();
}, 60_000);

test('a session authenticates REST on every replica; writes need its X-CSRF-Token; /mcp refuses the cookie', async () => {
  const cookie = await signInOverHttp(ADMIN.username, ADMIN.password);
  for (const gateway of stack.gateways) {
    const me = await fetch(`${gateway.url}/api/v1/session`, { headers: { cookie } });
    expect(me.status).toBe(200);
  }
  const { csrfToken } = (await (await fetch(`${stack.baseUrl}/api/v1/session`, { headers: { cookie } })).json()) as {
    csrfToken: string;
  };
  const body = JSON.stringify({ name: 'from-the-console', role: 'viewer', surfaces: ['rest_api'] });
  const without = await fetch(`${stack.baseUrl}/api/v1/api-keys`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body,
  });
  expect(without.status).toBe(403);
  expect(await without.json()).toMatchObject({ code: 'unauthorized', field: 'csrf' });
  const wrong = await fetch(`${stack.baseUrl}/api/v1/api-keys`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': 'not-the-token' },
    body,
  });
  expect(wrong.status).toBe(403);
  const withToken = await fetch(`${stack.baseUrl}/api/v1/api-keys`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrfToken },
    body,
  });
  expect(withToken.status).toBe(201);

  // The audit row names the credential type `session` (written asynchronously: poll briefly).
  let rows = '';
  for (let i = 0; i < 30 && !rows.includes('"session"'); i++) {
    const audit = await restCall(stack.baseUrl, '/audit?action=api_key.created', { token: adminToken });
    rows = JSON.stringify(audit.body?.items ?? []);
    if (!rows.includes('"session"')) await new Promise((r) => setTimeout(r, 200));
  }
  expect(rows).toContain('"session"');

  const mcp = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
  expect(mcp.status).toBe(401);
}, 60_000);

test('the session follows the user: a role change applies, a password reset and sign-out end it', async () => {
  const id = await createUser('erin', 'developer', 'erin-password-1');
  const cookie = await signInOverHttp('erin', 'erin-password-1');
  const role = async (): Promise<unknown> => {
    const res = await fetch(`${stack.baseUrl}/api/v1/session`, { headers: { cookie } });
    return res.status === 200 ? ((await res.json()) as { user: { role: string } }).user.role : res.status;
  };
  expect(await role()).toBe('developer');
  await restCall(stack.baseUrl, `/users/${id}`, { method: 'PATCH', token: adminToken, body: { role: 'viewer' } });
  expect(await role()).toBe('viewer');
  await restCall(stack.baseUrl, `/users/${id}`, {
    method: 'PATCH',
    token: adminToken,
    body: { password: 'erin-password-2' },
  });
  expect(await role()).toBe(401);

  const again = await signInOverHttp('erin', 'erin-password-2');
  const { csrfToken } = (await (
    await fetch(`${stack.baseUrl}/api/v1/session`, { headers: { cookie: again } })
  ).json()) as {
    csrfToken: string;
  };
  const out = await fetch(`${stack.baseUrl}/signout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: again, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrfToken }).toString(),
  });
  expect(out.status).toBe(303);
  expect((await fetch(`${stack.baseUrl}/api/v1/session`, { headers: { cookie: again } })).status).toBe(401);
}, 60_000);

test('the form refuses a missing CSRF token, an off-site next, and applies the brute-force limit', async () => {
  const noCsrf = await fetch(`${stack.baseUrl}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...ADMIN, next: '/' }).toString(),
  });
  expect(noCsrf.status).toBe(403);
  expect(noCsrf.headers.getSetCookie().some((c) => c.startsWith('dagu_session='))).toBe(false);

  for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
    const res = await postSignInForm({ ...ADMIN, next });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
  }

  await createUser('frank', 'viewer', 'frank-password-1');
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await postSignInForm({ username: 'frank', password: 'nope' });
    statuses.push(res.status);
  }
  expect(statuses).toEqual([401, 401, 401, 429]);
}, 60_000);
