/**
 * The console's second wave in a real browser (issue 26): sub-run and foreach drill-down on the
 * run page, the administration pages for published agents and OAuth authorizations (manager
 * and up; a viewer sees none and is refused directly), and step-level live updates from
 * `GET /api/v1/events` with no polling of the run. Debian's chromium (browser.ts) against the
 * built stack (stack.ts); screenshots go to test/e2e/screenshots/.
 */
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { createSseBlockReader } from '../../packages/runtime/test-fixtures/sse-blocks';
import { MemoryProvider, PretendBrowser, walkAuthorization } from './oauth-http';
import { launchBrowser, saveScreenshot } from './browser';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const MANAGER = { username: 'mona', password: 'manager-password-1' };
const VIEWER = { username: 'vic', password: 'viewer-password-1' };
const WS = 'console-ws';

/** A foreach of three items (beta fails) and then a `dag.run` of a local sub-DAG. */
const DRILL = `steps:
  - id: loop
    foreach:
      items: [alpha, beta, gamma]
      as: item
      steps:
        - id: say
          run: sh -c 'echo "item \${foreach.item}"; test "\${foreach.item}" != beta'
  - name: call
    action: dag.run
    with: {dag: child}
    depends: [loop]
---
name: child
steps:
  - name: hello
    run: echo hello from child
`;

/** Six steps in a chain, a second each: long enough for step events to show between run events. */
const CHAIN = `steps:\n${[1, 2, 3, 4, 5, 6]
  .map((i) => `  - name: s${i}\n    command: sleep 1\n${i > 1 ? `    depends: [s${i - 1}]\n` : ''}`)
  .join('')}`;

/**
 * The file the slow child waits for: the test creates it once the child's page is open, so the
 * child cannot finish before the page looks (a fixed nap lost that race on a loaded CI machine).
 */
const GATE_FILE = join(tmpdir(), `console-live-gate-${randomUUID()}`);

/**
 * A first step to open the page during, then a dag.run whose child waits for GATE_FILE (60 s at
 * most): children appear live.
 */
const SLOW_PARENT = `steps:
  - name: warm
    run: sleep 2
  - name: call
    action: dag.run
    with: {dag: slow}
    depends: [warm]
---
name: slow
steps:
  - name: nap
    run: timeout 60 sh -c "until [ -e ${GATE_FILE} ]; do sleep 0.1; done"
`;

let stack: Stack;
let browser: Browser;
let adminToken: string;

const api = (path: string, init: RestInit = {}): Promise<RestReply> =>
  restCall(stack.baseUrl, path, { token: adminToken, ...init });

/** Polls a run until `done` holds (30 s at most). */
async function runUntil(name: string, id: string, done: (run: Record<string, unknown>) => boolean) {
  const until = Date.now() + 30_000;
  for (;;) {
    const run = (await api(`/dag-runs/${name}/${id}`)).body ?? {};
    if (done(run) || Date.now() > until) return run;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A fresh browser context signed in as `user` through the sign-in page; lands on `next`. */
async function signIn(
  user: { username: string; password: string },
  next = '/dags',
  viewport = { width: 1280, height: 860 },
): Promise<[BrowserContext, Page]> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}${next}`);
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
    ['drill', DRILL],
    ['chain', CHAIN],
    ['slow-parent', SLOW_PARENT],
  ])
    expect((await api(`/dags/${name}`, { method: 'PUT', body: { spec } })).status).toBe(201);
  expect(
    (await api(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug: 'helpdesk', title: 'Helpdesk' } })).status,
  ).toBe(201);
  const tools = [
    { kind: 'dagu_tool', tool: 'dagu_read', restrictions: { targets: ['dags', 'runs'] } },
    { kind: 'dag', dag: 'chain', name: 'run_chain', waitSeconds: 30 },
  ];
  expect((await api(`/workspaces/${WS}/agents/helpdesk/tools`, { method: 'PUT', body: { tools } })).status).toBe(200);
  expect(
    (await api(`/workspaces/${WS}/agents/helpdesk`, { method: 'PATCH', body: { state: 'published' } })).status,
  ).toBe(200);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await rm(GATE_FILE, { force: true });
});

test('drill into a foreach step (items with their status, a body step log) and into a sub-run and back', async () => {
  const started = await api('/dags/drill/start', { method: 'POST', body: {} });
  const id = String(started.body?.dagRunId);
  const run = await runUntil('drill', id, (r) => !['running', 'queued', 'not_started'].includes(String(r.statusLabel)));
  expect(run.statusLabel).toBe('partially_succeeded');
  const [context, page] = await signIn(ADMIN, `/runs/drill/${id}`);
  try {
    // Foreach: the step's items with their status; beta failed.
    await page.locator('table.steps').getByRole('button', { name: 'loop', exact: true }).click();
    const items = page.getByRole('region', { name: 'Foreach items of loop' });
    await items.locator('table.items tbody tr').nth(2).waitFor();
    expect(await items.locator('table.items tbody tr').count()).toBe(3);
    await items.getByText('3 items: 2 succeeded, 1 failed').waitFor();
    const failedRow = items.locator('table.items tbody tr', { hasText: 'failed' });
    expect(await failedRow.count()).toBe(1);
    await failedRow.getByRole('button').click();
    await items
      .getByRole('list', { name: /Body steps of item/ })
      .getByRole('button', { name: 'say' })
      .click();
    await page.getByRole('heading', { name: 'Log of say (loop, item beta)' }).waitFor();
    await page.locator('pre.log', { hasText: 'item beta' }).waitFor();
    await saveScreenshot(page, 'console-foreach');

    // Sub-run: the dag.run step links to its child run, whose steps and logs open; back to the root.
    await page.locator('table.steps').getByRole('button', { name: 'call', exact: true }).click();
    await page
      .getByRole('region', { name: 'Sub-runs of call' })
      .getByRole('link', { name: /^child · / })
      .click();
    await page.waitForURL(new RegExp(`/runs/drill/${id}/sub/[^/]+$`));
    await page.getByRole('heading', { name: /child \/ sub-run/ }).waitFor();
    await page.locator('table.steps').getByRole('button', { name: 'hello', exact: true }).click();
    await page.locator('pre.log', { hasText: 'hello from child' }).waitFor();
    await page.locator('svg.graph [data-step="hello"]').waitFor();
    await saveScreenshot(page, 'console-sub-run');
    await page.getByRole('link', { name: new RegExp(`root run drill · ${id}`) }).click();
    await page.waitForURL(new RegExp(`/runs/drill/${id}$`));
    await page.locator('table.steps tr[data-step="call"]').waitFor();
    // The graph is one tab stop; arrow keys move between its nodes and Enter opens a step.
    await page.locator('svg.graph g.node[data-step="call"]').waitFor();
    expect(await page.locator('svg.graph g.node[tabindex="0"]').count()).toBe(1);
    await page.locator('svg.graph g.node[tabindex="0"]').focus();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Log of call' }).waitFor();
    await page.getByRole('region', { name: 'Sub-runs of call' }).waitFor();
  } finally {
    await context.close();
  }
}, 90_000);

test('a sub-run started while the page is open appears live, and its own page follows it live', async () => {
  const started = await api('/dags/slow-parent/start', { method: 'POST', body: {} });
  const id = String(started.body?.dagRunId);
  const [context, page] = await signIn(ADMIN, `/runs/slow-parent/${id}`);
  try {
    await page.locator('table.steps tr[data-step="call"]').waitFor();
    await page.locator('table.steps').getByRole('button', { name: 'call', exact: true }).click();
    const link = page.getByRole('region', { name: 'Sub-runs of call' }).getByRole('link', { name: /^slow · / });
    await link.waitFor({ timeout: 20_000 });
    await link.click();
    await page.waitForURL(new RegExp(`/runs/slow-parent/${id}/sub/[^/]+$`));
    // Opened while the child waits: once let go, its step and status turn succeeded without a reload.
    await page.locator('table.steps tr[data-step="nap"]').waitFor();
    expect(await page.locator('.run-head .badge', { hasText: 'succeeded' }).count()).toBe(0);
    await writeFile(GATE_FILE, '');
    await page.locator('table.steps tr[data-step="nap"][data-status="succeeded"]').waitFor({ timeout: 20_000 });
    await page.locator('.run-head .badge', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
  } finally {
    await context.close();
  }
}, 60_000);

test('a manager sees the agent, its catalog and keys; a new key is shown once, then revoked', async () => {
  const [context, page] = await signIn(MANAGER, '/dags');
  try {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    // A manager gets no user, key or audit administration (admin only).
    expect(await page.getByRole('link', { name: 'Users, keys, audit' }).count()).toBe(0);
    await page.getByLabel('Workspace').fill(WS);
    await page.getByRole('button', { name: 'Show agents' }).click();
    await page.locator('table.agents tbody tr', { hasText: 'published' }).waitFor();
    await saveScreenshot(page, 'console-agents');
    await page.getByRole('link', { name: 'Helpdesk' }).click();
    await page.waitForURL(new RegExp(`/admin/agents/${WS}/helpdesk$`));
    await expect(page.getByLabel('State').inputValue()).resolves.toBe('published');
    const catalog = page.locator('table.catalog');
    await catalog.getByText('dagu_read', { exact: true }).waitFor();
    await catalog.getByText('targets: dags, runs').waitFor();
    await catalog.getByText('DAG chain').waitFor();
    await page.getByText('No live keys.').waitFor();

    await page.getByLabel('New key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.locator('.once code.secret');
    await secret.waitFor();
    const key = (await secret.textContent()) ?? '';
    expect(key).toMatch(/^dagu_agent_/);
    await page.locator('table.keys tbody tr', { hasText: 'laptop' }).waitFor();
    await saveScreenshot(page, 'console-agent');

    // Shown once: the page opened again lists the key by name and prefix, never the key.
    await page.reload();
    await page.locator('table.keys tbody tr', { hasText: 'laptop' }).waitFor();
    expect(await page.content()).not.toContain(key);

    // Usage (issue 25's route): one call with the new key shows on the page as one call of that tool.
    const agentClient = new Client({ name: 'console-e2e-agent', version: '1' });
    await agentClient.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp/v1/${WS}/helpdesk`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    const answer = await agentClient.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
    expect(answer.isError).toBeFalsy();
    await agentClient.close();
    const usageRow = page.locator('table.usage tbody tr', { hasText: 'dagu_read' });
    for (let i = 0; i < 20 && (await usageRow.locator('td[data-label="Calls"]').textContent()) !== '1'; i++) {
      await new Promise((r) => setTimeout(r, 500));
      await page.reload();
      await usageRow.waitFor();
    }
    await expect(usageRow.locator('td[data-label="Calls"]').textContent()).resolves.toBe('1');
    await expect(usageRow.locator('td[data-label="Errors"]').textContent()).resolves.toBe('0');
    await saveScreenshot(page, 'console-agent-usage');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke key laptop' }).click();
    await page.getByText('Key laptop revoked.').waitFor();
    await page.getByText('No live keys.').waitFor();
  } finally {
    await context.close();
  }
  const keys = await api(`/workspaces/${WS}/agents/helpdesk/keys`);
  expect(keys.body?.items).toEqual([]);
}, 60_000);

/** The SDK client's OAuth flow at `/mcp` as `who` (the person played over HTTP): one grant. */
async function authorizeClient(who: { username: string; password: string }): Promise<string> {
  const redirect = 'http://127.0.0.1:47126/callback';
  const provider = new MemoryProvider(redirect);
  const url = new URL(`${stack.baseUrl}/mcp`);
  await expect(
    new Client({ name: 'console-e2e', version: '1' }).connect(
      new StreamableHTTPClientTransport(url, { authProvider: provider }),
    ),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  const walked = await walkAuthorization(new PretendBrowser(stack.baseUrl), provider.authorizationUrl?.href ?? '', who);
  await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(
    walked.redirect.searchParams.get('code') ?? '',
  );
  return String(provider.info?.client_id);
}

test("an admin sees everyone's OAuth authorizations and revokes one; a manager sees only their own", async () => {
  const clientId = await authorizeClient(VIEWER);
  const [context, page] = await signIn(ADMIN, '/admin/oauth');
  try {
    await page.getByRole('heading', { name: 'OAuth authorizations', level: 1 }).waitFor();
    const row = page.locator('table.authorizations tbody tr', { hasText: clientId });
    await row.waitFor();
    await row.getByRole('cell', { name: VIEWER.username, exact: true }).waitFor();
    await saveScreenshot(page, 'console-oauth');
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: new RegExp(`^Revoke .* for ${VIEWER.username}$`) }).click();
    await page.getByText(new RegExp(`revoked for ${VIEWER.username}`)).waitFor();
    await page.getByText('No client is authorized.').waitFor();
  } finally {
    await context.close();
  }
  const again = await authorizeClient(VIEWER);
  const [managerContext, managerPage] = await signIn(MANAGER, '/admin/oauth');
  try {
    await managerPage.getByText('You have authorized no client.').waitFor();
    expect(await managerPage.getByText(again).count()).toBe(0);
  } finally {
    await managerContext.close();
  }
}, 90_000);

test('a viewer sees no administration page, and a direct call with the session is refused', async () => {
  const [context, page] = await signIn(VIEWER, '/dags');
  try {
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'DAGs' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Administration' }).count()).toBe(0);
    for (const path of ['/admin', '/admin/agents', `/admin/agents/${WS}/helpdesk`, '/admin/oauth']) {
      await page.goto(`${stack.baseUrl}${path}`);
      await page.getByText(/needs the manager role or higher/).waitFor();
      expect(await page.getByText('Helpdesk').count()).toBe(0);
      expect(await page.locator('table').count()).toBe(0);
    }
    const statuses = await page.evaluate(async (ws) => {
      const session = (await (await fetch('/api/v1/session')).json()) as { csrfToken: string };
      const headers = { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken };
      return {
        list: (await fetch(`/api/v1/workspaces/${ws}/agents`)).status,
        newKey: (
          await fetch(`/api/v1/workspaces/${ws}/agents/helpdesk/keys`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: 'sneaky' }),
          })
        ).status,
        everyonesGrants: (await fetch('/api/mcp/authorizations?user=all')).status,
      };
    }, WS);
    expect(statuses).toEqual({ list: 403, newKey: 403, everyonesGrants: 403 });
  } finally {
    await context.close();
  }
  expect((await api(`/workspaces/${WS}/agents/helpdesk/keys`)).body?.items).toEqual([]);
}, 60_000);

test('step events of one run reach its event stream, each after its state is readable', async () => {
  const id = randomUUID();
  const abort = new AbortController();
  const res = await fetch(`${stack.baseUrl}/api/v1/events?dagRunId=${id}`, {
    headers: { authorization: `Bearer ${adminToken}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const reader = createSseBlockReader({ defaultTimeoutMs: 30_000 });
  const decoder = new TextDecoder();
  const pump = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        reader.push(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted at the end of the test
    }
  })();
  // A stream of every run gets run events only (no step flood on list pages).
  const wide = await fetch(`${stack.baseUrl}/api/v1/events`, {
    headers: { authorization: `Bearer ${adminToken}` },
    signal: abort.signal,
  });
  const wideReader = createSseBlockReader({ defaultTimeoutMs: 30_000 });
  const widePump = (async () => {
    try {
      for await (const chunk of wide.body as unknown as AsyncIterable<Uint8Array>)
        wideReader.push(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted
    }
  })();
  try {
    await reader.next((b) => b.comment === 'connected');
    await wideReader.next((b) => b.comment === 'connected');
    expect((await api('/dags/chain/start', { method: 'POST', body: { dagRunId: id } })).status).toBe(201);
    const stepState = (data: string | undefined) => JSON.parse(data ?? '{}') as Record<string, unknown>;
    for (const step of ['s1', 's2', 's3', 's4', 's5', 's6']) {
      const block = await reader.next((b) => {
        const e = stepState(b.data);
        return e.step === step && e.statusLabel === 'succeeded';
      });
      expect(stepState(block.data)).toMatchObject({ name: 'chain', dagRunId: id, attemptNo: 1, status: 4 });
      // Published after the write: the run read now shows at least this state.
      const run = await api(`/dag-runs/chain/${id}`);
      const steps = (run.body?.steps ?? []) as Array<{ name: string; statusLabel: string }>;
      expect(steps.find((s) => s.name === step)?.statusLabel).toBe('succeeded');
    }
    await wideReader.next((b) => stepState(b.data).statusLabel === 'succeeded' && stepState(b.data).dagRunId === id);
    expect(wideReader.blocks.filter((b) => stepState(b.data).step !== undefined)).toEqual([]);
  } finally {
    abort.abort();
    await Promise.all([pump, widePump]);
  }
}, 60_000);

test('the run page follows each step live from step events, without reading the run again and again', async () => {
  const [context, page] = await signIn(ADMIN, '/runs');
  try {
    const started = await api('/dags/chain/start', { method: 'POST', body: {} });
    const id = String(started.body?.dagRunId);
    const detailReads: number[] = [];
    const detail = new RegExp(`/api/v1/dag-runs/chain/${id}$`);
    page.on('request', (req) => {
      if (req.method() === 'GET' && detail.test(new URL(req.url()).pathname)) detailReads.push(Date.now());
    });
    const stepEvents: string[] = [];
    page.on('response', (res) => {
      if (new URL(res.url()).pathname === '/api/v1/events') stepEvents.push(res.url());
    });
    await page.goto(`${stack.baseUrl}/runs/chain/${id}`);
    const row = (step: string, status: string) =>
      page.locator(`table.steps tr[data-step="${step}"][data-status="${status}"]`);
    // Steps turn succeeded one after another while the run is still running: only step events can do that.
    await row('s2', 'succeeded').waitFor({ timeout: 20_000 });
    expect(await row('s6', 'succeeded').count()).toBe(0);
    expect(await page.locator('.run-head .badge', { hasText: 'running' }).count()).toBe(1);
    await page.locator('svg.graph g.node[data-step="s2"][data-status="succeeded"]').waitFor();
    await row('s4', 'succeeded').waitFor({ timeout: 20_000 });
    await page.locator('.run-head .badge', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    await row('s6', 'succeeded').waitFor();
    // The first read, then one per run event (succeeded; running too if it came after the page opened).
    // A page that polled every 2 s would have read the run at least three more times over this run.
    expect(detailReads.length).toBeGreaterThanOrEqual(1);
    expect(detailReads.length).toBeLessThanOrEqual(3);
    expect(stepEvents.some((url) => url.includes(`dagRunId=${id}`))).toBe(true);
    await saveScreenshot(page, 'console-run-live-steps');
  } finally {
    await context.close();
  }
}, 60_000);

test('the new pages are usable in a narrow window and from the keyboard', async () => {
  const [context, page] = await signIn(MANAGER, `/admin/agents/${WS}/helpdesk`, { width: 390, height: 800 });
  try {
    await page.getByRole('heading', { name: 'Helpdesk', level: 1 }).waitFor();
    // No horizontal scrolling of the page itself: tables stack into cards.
    // (Page scripts as text: this file is type-checked as Node code, without the DOM's types.)
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(1);
    // Every form control on the page has an accessible name.
    const unlabelled = await page.evaluate(`[...document.querySelectorAll('input, select, textarea, button')]
      .filter((el) => el.type !== 'hidden')
      .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') ||
        (el.tagName === 'BUTTON' && el.textContent.trim() !== '')))
      .map((el) => el.outerHTML.slice(0, 80))`);
    expect(unlabelled).toEqual([]);
    // The key form works from the keyboard alone.
    await page.getByLabel('New key name').focus();
    await page.keyboard.type('keyboard');
    await page.keyboard.press('Enter');
    await page.locator('.once code.secret').waitFor();
    await saveScreenshot(page, 'console-agent-narrow');
  } finally {
    await context.close();
  }
}, 60_000);
