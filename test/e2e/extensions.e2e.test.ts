/**
 * Extensions as the supported extension point (issue 29), end to end through the real
 * stack with the MCP SDK client: the worked example (examples/greeter-service, built)
 * announces its two tools; an admin enables it over REST; the gateway serves them as
 * `greeter.*`, enforces the minimum role and the published input schema, drops them when
 * disabled (with `notifications/tools/list_changed`) and answers `resource_unavailable`
 * naming the extension when the service is killed mid-call, while built-in tools go on.
 * A static (`MCP_EXTENSIONS`) extension announcing `dagu_read` shows a name collision refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ExtensionService } from '@dagu-mcp/service-kit';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

const ROOT = join(__dirname, '..', '..');
const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let adminToken: string;
let admin: Client;
let viewer: Client;
let greeter: ChildProcess | undefined;
let shadow: ExtensionService;
let listChanged = 0;

const api = (path: string, init: RestInit = {}): Promise<RestReply> => restCall(stack.baseUrl, path, init);
const prefix = (): string => `e2e-${stack.id}`;

async function connectAs(token: string): Promise<Client> {
  const client = new Client({ name: 'dagu-mcp-e2e-extensions', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

function startGreeter(): ChildProcess {
  const child = spawn(process.execPath, [join(ROOT, 'examples', 'greeter-service', 'dist', 'main.js')], {
    env: { PATH: process.env.PATH ?? '', REDIS_URL: 'redis://127.0.0.1:6379', BUS_PREFIX: prefix() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(`[greeter] ${d.toString()}`));
  return child;
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

/** Polls `check` every 200 ms until it holds or `timeoutMs` passes; returns how long it took, ms. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 8000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return Date.now() - started;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  toolResult(await client.callTool({ name, arguments: args }));

beforeAll(async () => {
  stack = await startStack(
    {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      TOKEN_SECRET: 'extensions-e2e-token-secret-0123456789',
      MCP_EXTENSIONS: 'shadow',
      MCP_EXTENSION_CALL_TIMEOUT_MS: '20000',
    },
    { healthTimeoutMs: 60_000 },
  );
  const login = await api('/auth/login', { method: 'POST', body: ADMIN });
  adminToken = String(login.body?.token);
  const key = await api('/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: 'extensions-viewer', role: 'viewer', surfaces: ['mcp'] },
  });
  expect(key.status).toBe(201);
  admin = await connectAs(adminToken);
  admin.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
  viewer = await connectAs(String(key.body?.key));
  // A static extension that announces a built-in tool's name, and one of its own.
  shadow = new ExtensionService({
    redisUrl: 'redis://127.0.0.1:6379',
    prefix: prefix(),
    name: 'shadow',
    tools: ['dagu_read', 'shadow_ping'].map((name) => ({
      name,
      description: `shadow ${name}`,
      inputSchema: { type: 'object', properties: {} },
      handle: async () => ({ from: 'shadow' }),
    })),
  });
  await shadow.start();
  greeter = startGreeter();
}, 150_000);

afterAll(async () => {
  greeter?.kill('SIGKILL');
  await shadow?.stop();
  await admin?.close();
  await viewer?.close();
  await stack?.stop();
});

describe('registration without a gateway release', () => {
  test('an announced extension is not served until an admin enables it; then within seconds, with list_changed', async () => {
    await eventually(async () => (await toolNames(admin)).includes('shadow_ping'));
    expect((await toolNames(admin)).some((n) => n.startsWith('greeter.'))).toBe(false);
    await expect(admin.callTool({ name: 'greeter.hello', arguments: { name: 'x' } })).rejects.toThrow(/Unknown tool/);

    const before = listChanged;
    const viewerPut = await api('/extensions/greeter', { method: 'PUT', token: adminToken, body: { enabled: true } });
    expect(viewerPut.status).toBe(200);
    const ms = await eventually(async () => (await toolNames(admin)).includes('greeter.hello'));
    process.stdout.write(`greeter tools served ${ms} ms after the PUT\n`);
    const tools = (await admin.listTools()).tools.filter((t) => t.name.startsWith('greeter.'));
    expect(tools.map((t) => t.name).sort()).toEqual(['greeter.hello', 'greeter.set_greeting']);
    expect(tools.find((t) => t.name === 'greeter.hello')).toMatchObject({
      title: 'Say hello',
      inputSchema: { type: 'object', required: ['name'] },
      annotations: { readOnlyHint: true },
    });
    await eventually(async () => listChanged > before, 5000);

    const audit = await api('/audit?action=extension.updated', { token: adminToken });
    expect(audit.body?.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ target: 'greeter', outcome: 'succeeded' })]),
    );
  }, 30_000);

  test('PUT is admin only and validates the name and body', async () => {
    const key = await api('/api-keys', {
      method: 'POST',
      token: adminToken,
      body: { name: 'extensions-operator-rest', role: 'operator', surfaces: ['rest_api'] },
    });
    const operatorPut = await api('/extensions/greeter', {
      method: 'PUT',
      token: String(key.body?.key),
      body: { enabled: false },
    });
    expect(operatorPut.status).toBe(403);
    expect(
      (await api('/extensions/Bad_Name', { method: 'PUT', token: adminToken, body: { enabled: true } })).status,
    ).toBe(400);
    expect((await api('/extensions/greeter', { method: 'PUT', token: adminToken, body: { on: true } })).status).toBe(
      400,
    );
    expect(
      (await api('/extensions/shadow', { method: 'PUT', token: adminToken, body: { enabled: true } })).status,
    ).toBe(409);
  });
});

describe('safety', () => {
  test('a call reaches the service with the principal (never the credential)', async () => {
    const result = await call(viewer, 'greeter.hello', { name: 'Ada' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ greeting: 'Hello, Ada!', greetedBy: 'api_key:extensions-viewer' });
  });

  test('the minimum role is enforced before the call reaches the service', async () => {
    const refused = await call(viewer, 'greeter.set_greeting', { greeting: 'Hi {name}' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'unauthorized' });
    expect(String(refused.structuredContent?.message)).toContain('operator');
    // Nothing changed on the service's side.
    expect((await call(viewer, 'greeter.hello', { name: 'Bo' })).structuredContent?.greeting).toBe('Hello, Bo!');
    const allowed = await call(admin, 'greeter.set_greeting', { greeting: 'Hi {name}' });
    expect(allowed.isError).toBeFalsy();
    expect((await call(viewer, 'greeter.hello', { name: 'Bo' })).structuredContent?.greeting).toBe('Hi Bo');
  });

  test.each([
    [{}, "must have required property 'name'"],
    [{ name: 5 }, 'must be string'],
    [{ name: 'x', extra: true }, 'must NOT have additional properties'],
    [{ name: 'x', delayMs: -1 }, 'must be >= 0'],
  ])('input %j is refused by the gateway against the published schema', async (args, message) => {
    const result = await call(viewer, 'greeter.hello', args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'invalid_tool_input' });
    expect(JSON.stringify(result.structuredContent?.details)).toContain(message);
  });

  test('a tool error of the service is the caller’s isError result', async () => {
    const result = await call(admin, 'greeter.set_greeting', { greeting: 'no placeholder' });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'The greeting must contain {name}.' }]);
  });

  test('a name collision is refused: the built-in dagu_read stays the only one, the rest of the catalog is served', async () => {
    const names = await toolNames(admin);
    expect(names.filter((n) => n === 'dagu_read')).toHaveLength(1);
    expect(names).toContain('shadow_ping');
    const read = await call(admin, 'dagu_read', { target: 'reference' });
    expect(read.structuredContent).toMatchObject({ target: 'reference' });
    expect(read.structuredContent?.from).toBeUndefined();
  });

  test('allowedTools narrows what is served', async () => {
    await api('/extensions/greeter', {
      method: 'PUT',
      token: adminToken,
      body: { enabled: true, allowedTools: ['hello'] },
    });
    await eventually(async () => !(await toolNames(admin)).includes('greeter.set_greeting'));
    expect(await toolNames(admin)).toContain('greeter.hello');
    await expect(admin.callTool({ name: 'greeter.set_greeting', arguments: { greeting: '{name}' } })).rejects.toThrow(
      /Unknown tool/,
    );
  });
});

describe('dropping an extension', () => {
  test('disabled: gone from tools/list within seconds, with list_changed to the live session', async () => {
    const before = listChanged;
    await api('/extensions/greeter', { method: 'PUT', token: adminToken, body: { enabled: false } });
    const ms = await eventually(async () => !(await toolNames(admin)).some((n) => n.startsWith('greeter.')));
    process.stdout.write(`greeter tools dropped ${ms} ms after the disabling PUT\n`);
    await eventually(async () => listChanged > before, 5000);
    await api('/extensions/greeter', { method: 'PUT', token: adminToken, body: { enabled: true } });
    await eventually(async () => (await toolNames(admin)).includes('greeter.hello'));
  }, 30_000);

  test('killed mid-call: resource_unavailable naming it, other tools unaffected, then dropped from the list', async () => {
    const started = Date.now();
    const slow = call(viewer, 'greeter.hello', { name: 'Slow', delayMs: 15_000 });
    await new Promise((r) => setTimeout(r, 700));
    greeter?.kill('SIGKILL');
    // Built-in tools go on while the extension is dying.
    const read = await call(viewer, 'dagu_read', { target: 'reference' });
    expect(read.isError).toBeFalsy();
    const result = await slow;
    const waited = Date.now() - started;
    process.stdout.write(`killed extension's call answered after ${waited} ms\n`);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'resource_unavailable', details: { extension: 'greeter' } });
    expect(String(result.structuredContent?.message)).toContain('greeter');
    expect(waited).toBeLessThan(12_000);
    await eventually(async () => !(await toolNames(admin)).some((n) => n.startsWith('greeter.')));
    expect(await toolNames(admin)).toContain('dagu_read');
    // Restarted, it is served again without any gateway change.
    greeter = startGreeter();
    await eventually(async () => (await toolNames(admin)).includes('greeter.hello'), 15_000);
    expect((await call(viewer, 'greeter.hello', { name: 'Back' })).isError).toBeFalsy();
  }, 60_000);
});
