/**
 * The web console in a real browser (issue 26 "Tests"): Debian's chromium through the shared
 * fixture (browser.ts) against the built stack (stack.ts), signed in through the gateway's
 * sign-in page with the `dagu_session` cookie. Each test names the item of the issue it
 * proves; screenshots of the main pages go to test/e2e/screenshots/.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, saveScreenshot } from './browser';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const MANAGER = { username: 'mona', password: 'manager-password-1' };
const VIEWER = { username: 'vic', password: 'viewer-password-1' };

const FAILING =
  'description: Nightly report that fails at its second step\nlabels: [team=data]\nschedule: "0 3 * * *"\n' +
  'steps:\n  - name: extract\n    command: echo extracted 42 rows\n' +
  '  - name: publish\n    command: sh -c "echo publishing; echo upload refused by storage >&2; exit 4"\n    depends: [extract]\n';
const GREET =
  'params:\n  - name: who\n    default: world\n    description: whom to greet\n' +
  'steps:\n  - name: wait\n    command: sleep 1\n  - name: greet\n    command: echo hello ${who}\n    depends: [wait]\n';
const GATED =
  'steps:\n  - name: build\n    command: echo built\n  - name: gate\n    depends: [build]\n    run: "true"\n' +
  '    approval: {prompt: Ship it to production?}\n  - name: ship\n    depends: [gate]\n    command: echo shipped\n';

let stack: Stack;
let browser: Browser;
let adminToken: string;

const api = (path: string, init: RestInit = {}): Promise<RestReply> =>
  restCall(stack.baseUrl, path, { token: adminToken, ...init });

/** Polls a run until `done` holds (20 s at most). */
async function runUntil(name: string, id: string, done: (run: Record<string, unknown>) => boolean) {
  const until = Date.now() + 20_000;
  for (;;) {
    const run = (await api(`/dag-runs/${name}/${id}`)).body ?? {};
    if (done(run) || Date.now() > until) return run;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A fresh browser context signed in as `user` through the sign-in page; lands on `next`. */
async function signIn(user: { username: string; password: string }, next = '/dags'): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}${next}`);
  // Not signed in: the console sends the browser to the sign-in page, coming back to `next`.
  await page.waitForURL(/\/signin/);
  await page.getByLabel(/user ?name/i).fill(user.username);
  await page.getByLabel(/password/i).fill(user.password);
  await page.getByRole('button', { name: /sign in/i }).click();
  await page.waitForURL((url) => url.pathname === next);
  return [context, page];
}

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  adminToken = String((await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN })).body?.token);
  for (const [user, role] of [
    [MANAGER, 'manager'],
    [VIEWER, 'viewer'],
  ] as const)
    expect((await api('/users', { method: 'POST', body: { ...user, role } })).status).toBe(201);
  for (const [name, spec] of [
    ['nightly-report', FAILING],
    ['greet', GREET],
    ['deploy-gate', GATED],
  ])
    expect((await api(`/dags/${name}`, { method: 'PUT', body: { spec } })).status).toBe(201);
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

test("sign in, find a failed run from the DAG list, open its failing step's log", async () => {
  const started = await api('/dags/nightly-report/start', { method: 'POST', body: {} });
  const id = String(started.body?.dagRunId);
  await runUntil('nightly-report', id, (run) => run.statusLabel === 'failed');
  const [context, page] = await signIn(ADMIN);
  try {
    const row = page.getByRole('row', { name: /nightly-report/ });
    await row.getByRole('link', { name: 'failed' }).waitFor();
    await saveScreenshot(page, 'console-dags');
    await row.getByRole('link', { name: 'failed' }).click();
    await page.waitForURL(new RegExp(`/runs/nightly-report/${id}$`));
    await page.locator('svg.graph [data-step="publish"]').waitFor();
    await page.getByRole('button', { name: 'publish' }).first().click();
    await page.getByRole('heading', { name: 'Log of publish' }).waitFor();
    await page.locator('pre.stderr', { hasText: 'upload refused by storage' }).waitFor();
    await saveScreenshot(page, 'console-run-failed');
  } finally {
    await context.close();
  }
}, 60_000);

test('start a DAG with params from the form and watch it finish live', async () => {
  const [context, page] = await signIn(ADMIN, '/dags/greet');
  try {
    await page.getByLabel('who').fill('console');
    await page.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/runs\/greet\/[^/]+$/);
    // The page was opened while the run was running; it turns succeeded without a reload.
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    await page.locator('.run-head .badge', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    expect(navigations).toEqual([]);
    await page.getByRole('button', { name: 'greet' }).first().click();
    await page.locator('pre.log', { hasText: 'hello console' }).first().waitFor();
    await saveScreenshot(page, 'console-run-live');
  } finally {
    await context.close();
  }
}, 60_000);

test('approve a waiting gate as a manager and see the run continue', async () => {
  const started = await api('/dags/deploy-gate/start', { method: 'POST', body: {} });
  const id = String(started.body?.dagRunId);
  await runUntil('deploy-gate', id, (run) => run.statusLabel === 'waiting');
  const [context, page] = await signIn(MANAGER, '/checkpoints');
  try {
    await page.getByRole('link', { name: /deploy-gate · gate/ }).click();
    await page.getByText('Ship it to production?').waitFor();
    await saveScreenshot(page, 'console-checkpoint');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.run-head .badge', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    await page.getByText(/approved by mona/).waitFor();
  } finally {
    await context.close();
  }
  const run = await api(`/dag-runs/deploy-gate/${id}`);
  expect(run.body?.statusLabel).toBe('succeeded');
}, 60_000);

test('a viewer sees no start button, and a direct POST with the session is refused', async () => {
  const [context, page] = await signIn(VIEWER, '/dags/greet');
  try {
    await page.getByRole('heading', { name: 'greet', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: 'Start' }).count()).toBe(0);
    expect(await page.locator('#yaml').getAttribute('readonly')).not.toBeNull();
    const status = await page.evaluate(async () => {
      const session = (await (await fetch('/api/v1/session')).json()) as { csrfToken: string };
      const res = await fetch('/api/v1/dags/greet/start', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
        body: '{}',
      });
      return res.status;
    });
    expect(status).toBe(403);
  } finally {
    await context.close();
  }
}, 60_000);

test('the YAML editor marks a validation error at the right line', async () => {
  const [context, page] = await signIn(ADMIN, '/dags/greet');
  try {
    const editor = page.locator('#yaml');
    await editor.waitFor();
    // Line 9 names an unknown field of step `greet` (the `comand` typo).
    const broken = GREET.replace('    command: echo hello ${who}', '    comand: echo hello ${who}');
    expect(broken.split('\n')[8]).toContain('comand');
    await editor.fill(broken);
    await page.locator('.gutter .ln.err[data-line="9"]').waitFor();
    await page.getByRole('button', { name: /^Line 9: .*comand/ }).waitFor();
    await saveScreenshot(page, 'console-yaml-error');
  } finally {
    await context.close();
  }
}, 60_000);
