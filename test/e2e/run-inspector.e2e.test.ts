/**
 * The run inspector MCP App (issue 27) end to end: the gateway's UI extension negotiation
 * and `ui://dagu/run-inspector` resource over the real SDK client, and the app itself
 * rendered in real Chromium inside a small test host page that uses the ext-apps host
 * bridge (`AppBridge`, packages/run-inspector/test-host/host.ts), fed a real
 * `dagu_execute` result from the running stack. The app's tool calls go through the
 * bridge to the test, which makes them with the SDK client.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser, Frame, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_APP_MIME_TYPE, RUN_INSPECTOR_URI, UI_EXTENSION_ID } from '@dagu-mcp/run-inspector';
import { launchBrowser, saveScreenshot } from './browser';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

const HOST_ORIGIN = 'http://mcp-app-host.test';
/** The host page's CSP; the app's srcdoc frame inherits it, so any fetch or external script of the app is refused. */
const HOST_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'self'";

let stack: Stack;
let uiClient: Client;
let plainClient: Client;
let browser: Browser;
let hostScript: string;

beforeAll(async () => {
  stack = await startStack({}, { healthTimeoutMs: 60_000 });
  uiClient = new Client(
    { name: 'dagu-mcp-e2e-ui-host', version: '1.0.0' },
    { capabilities: { extensions: { [UI_EXTENSION_ID]: { mimeTypes: [MCP_APP_MIME_TYPE] } } } },
  );
  await uiClient.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl)));
  plainClient = await connectClient(stack.mcpUrl);
  const bundle = await build({
    entryPoints: [join(__dirname, '..', '..', 'packages', 'run-inspector', 'test-host', 'host.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
  });
  hostScript = (bundle.outputFiles[0]?.text ?? '').replace(/<\/script/gi, '<\\/script');
  browser = await launchBrowser();
}, 150_000);

afterAll(async () => {
  await browser?.close();
  await uiClient?.close();
  await plainClient?.close();
  await stack?.stop();
});

/** Reads the inspector resource with the UI client. */
async function inspectorHtml(): Promise<string> {
  const read = await uiClient.readResource({ uri: RUN_INSPECTOR_URI });
  const content = read.contents[0];
  if (content === undefined || !('text' in content)) throw new Error('the inspector came back without text');
  return content.text;
}

describe('negotiation: only clients that declare io.modelcontextprotocol/ui see the app', () => {
  test('a UI client gets the extension, _meta.ui.resourceUri on dagu_execute only, and the listed resource', async () => {
    expect(uiClient.getServerCapabilities()?.extensions).toEqual({ [UI_EXTENSION_ID]: {} });
    const { tools } = await uiClient.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('dagu_execute')?._meta).toEqual({ ui: { resourceUri: RUN_INSPECTOR_URI } });
    expect(byName.get('dagu_read')?._meta).toBeUndefined();
    expect(byName.get('dagu_change')?._meta).toBeUndefined();
    const { resources } = await uiClient.listResources();
    expect(resources.filter((r) => r.uri === RUN_INSPECTOR_URI)).toEqual([
      expect.objectContaining({ name: 'run_inspector', mimeType: MCP_APP_MIME_TYPE }),
    ]);
  });

  test('a client without the extension sees nothing new (and can still read the URI)', async () => {
    expect(plainClient.getServerCapabilities()?.extensions).toBeUndefined();
    const { tools } = await plainClient.listTools();
    expect(tools.every((t) => t._meta === undefined)).toBe(true);
    const { resources } = await plainClient.listResources();
    expect(resources.some((r) => r.uri.startsWith('ui://'))).toBe(false);
    const read = await plainClient.readResource({ uri: RUN_INSPECTOR_URI });
    expect(read.contents[0]?.mimeType).toBe(MCP_APP_MIME_TYPE);
  });

  test('the resource is one self-contained HTML document: no external scripts, styles or imports', async () => {
    const read = await uiClient.readResource({ uri: RUN_INSPECTOR_URI });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).toMatchObject({ uri: RUN_INSPECTOR_URI, mimeType: MCP_APP_MIME_TYPE });
    const html = await inspectorHtml();
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).not.toMatch(/<script[^>]*\bsrc=/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/@import/i);
    expect(html).toContain('data-testid="steps"');
  });
});

/** Starts an inline run with the UI client (no wait) and returns the tool's input and result. */
async function startRun(
  name: string,
  spec: string,
): Promise<{ args: Record<string, unknown>; result: CallToolResult; dagRunId: string }> {
  const args = { action: 'start', targetType: 'inline_spec', name, spec };
  const result = toolResult(await uiClient.callTool({ name: 'dagu_execute', arguments: args }));
  expect(result.isError).toBeFalsy();
  const dagRunId = result.structuredContent?.dagRunId;
  if (typeof dagRunId !== 'string') throw new Error('dagu_execute returned no dagRunId');
  return { args, result, dagRunId };
}

/** Opens the test host page and renders the inspector with a `dagu_execute` call's input and result. */
async function renderInspector(
  args: Record<string, unknown>,
  result: CallToolResult,
): Promise<{ page: Page; frame: Frame; requests: string[]; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 720, height: 640 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.route(`${HOST_ORIGIN}/**`, (route) =>
    route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': HOST_CSP },
      body: `<!doctype html><html><head><title>MCP App test host</title><style>body{margin:0;padding:16px;background:#f6f8fa;font-family:sans-serif}iframe{width:100%;border:1px solid #d1d9e0;border-radius:8px;background:#fff}</style></head><body><h1 style="font-size:14px">Test host · dagu_execute</h1><div id="apps"></div><script>${hostScript}</script></body></html>`,
    }),
  );
  await page.exposeFunction('hostCallTool', async (params: { name: string; arguments?: Record<string, unknown> }) =>
    uiClient.callTool(params),
  );
  await page.goto(`${HOST_ORIGIN}/`);
  const html = await inspectorHtml();
  await page.evaluate(
    async ({ html, args, result }) => {
      const render = (globalThis as unknown as { renderApp: (h: string, a: unknown, r: unknown) => Promise<void> })
        .renderApp;
      await render(html, args, result);
    },
    { html, args, result },
  );
  const frame = page.frames().find((f) => f !== page.mainFrame());
  if (frame === undefined) throw new Error('the host page has no app frame');
  return { page, frame, requests, problems };
}

const statusOf = (frame: Frame): Promise<string | null> =>
  frame.locator('[data-testid=run-status]').getAttribute('data-status');

async function waitForStatus(frame: Frame, wanted: string, timeoutMs: number): Promise<void> {
  await frame.waitForSelector(`[data-testid=run-status][data-status="${wanted}"]`, { timeout: timeoutMs });
}

describe('the inspector in Chromium inside an ext-apps host', () => {
  test("shows the run's steps and updates by itself when the run ends", async () => {
    const spec =
      'steps:\n  - name: prepare\n    run: echo preparing data\n  - name: crunch\n    run: sleep 2 && echo crunched\n    depends: [prepare]\n';
    const { args, result, dagRunId } = await startRun('inspector-short', spec);
    const { page, frame, requests, problems } = await renderInspector(args, result);
    try {
      await frame.waitForSelector('li[data-step="crunch"]', { timeout: 15_000 });
      expect(await frame.locator('[data-testid=dag-name]').textContent()).toBe('inspector-short');
      expect(await frame.locator('[data-testid=run-id]').textContent()).toBe(dagRunId);
      expect(
        await frame.locator('li[data-step]').evaluateAll((els) => els.map((e) => e.getAttribute('data-step'))),
      ).toEqual(['prepare', 'crunch']);
      // Nobody touches the page: the inspector follows the run to its end with dagu_read.
      await waitForStatus(frame, 'succeeded', 30_000);
      await frame.waitForSelector('li[data-step="crunch"] .badge[data-status="succeeded"]', { timeout: 5_000 });
      await frame.locator('li[data-step="prepare"]').click();
      await frame.waitForSelector('[data-testid=log]:has-text("preparing data")', { timeout: 10_000 });
      expect(await frame.locator('#stop').isDisabled()).toBe(true);
      expect(await frame.locator('#retry').isDisabled()).toBe(false);
      await saveScreenshot(page, 'run-inspector-succeeded');
      const calls = await page.evaluate(() => (globalThis as unknown as { appToolCalls: string[] }).appToolCalls);
      expect(new Set(calls)).toEqual(new Set(['dagu_read']));
      // Self-contained: the only request is the host page itself; nothing was refused by the CSP.
      expect(requests).toEqual([`${HOST_ORIGIN}/`]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);

  test('stop from inside the app stops the run through dagu_execute', async () => {
    const spec =
      'steps:\n  - name: warm-up\n    run: echo warming\n  - name: long-nap\n    run: sleep 60\n    depends: [warm-up]\n';
    const { args, result, dagRunId } = await startRun('inspector-stop', spec);
    const { page, frame, problems } = await renderInspector(args, result);
    try {
      await frame.waitForSelector('li[data-step="long-nap"] .badge[data-status="running"]', { timeout: 20_000 });
      expect(await statusOf(frame)).toBe('running');
      await saveScreenshot(page, 'run-inspector-running');
      await frame.locator('#stop').click();
      await waitForStatus(frame, 'aborted', 30_000);
      await saveScreenshot(page, 'run-inspector-stopped');
      const calls = await page.evaluate(() => (globalThis as unknown as { appToolCalls: string[] }).appToolCalls);
      expect(calls).toContain('dagu_execute');
      // The gateway agrees: the run was stopped, not left running.
      const read = toolResult(
        await plainClient.callTool({
          name: 'dagu_read',
          arguments: { target: 'run', name: 'inspector-stop', dagRunId },
        }),
      );
      expect(read.structuredContent?.data).toMatchObject({ statusLabel: 'aborted' });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);
  test('retry from inside the app runs the failed run again through dagu_execute', async () => {
    // The step fails on its first attempt and succeeds on the next: the marker file it leaves
    // behind is what the second attempt finds.
    const marker = join(tmpdir(), `inspector-retry-${process.pid}-${Date.now()}`);
    const spec = `steps:\n  - name: flaky\n    run: test -f ${marker} || { touch ${marker}; chmod 666 ${marker}; echo first attempt fails; exit 3; }\n`;
    const { args, result, dagRunId } = await startRun('inspector-retry', spec);
    const { page, frame, problems } = await renderInspector(args, result);
    try {
      await waitForStatus(frame, 'failed', 30_000);
      expect(await frame.locator('#retry').isDisabled()).toBe(false);
      await frame.locator('#retry').click();
      // The app follows the new attempt by itself to its end.
      await waitForStatus(frame, 'succeeded', 30_000);
      await saveScreenshot(page, 'run-inspector-retried');
      const calls = await page.evaluate(() => (globalThis as unknown as { appToolCalls: string[] }).appToolCalls);
      expect(calls).toContain('dagu_execute');
      const read = toolResult(
        await plainClient.callTool({
          name: 'dagu_read',
          arguments: { target: 'run', name: 'inspector-retry', dagRunId },
        }),
      );
      expect(read.structuredContent?.data).toMatchObject({ statusLabel: 'succeeded' });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      rmSync(marker, { force: true });
    }
  }, 90_000);
});
