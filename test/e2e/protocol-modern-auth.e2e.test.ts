/**
 * The stateless revision (2026-07-28) with authentication on and principals
 * below admin (issue 22; dagu-model §9): every request carries its own
 * credential, and each role does exactly what §9 gives it — a viewer reads
 * but `dagu_execute` is refused with `unauthorized`; an operator runs stored
 * DAGs but not caller-supplied YAML; a multi-round-trip `requestState` is
 * one principal's and opens for nobody else. Driven by the SDK's v2 client
 * pinned to 2026-07-28 and, where the wire is the point, raw HTTP.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { restCall } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-modern' };
const MODERN = '2026-07-28';

let stack: Stack;
let adminToken = '';
const clients: ModernClient[] = [];

/** A new API key for the MCP surface with `role`. */
async function keyWithRole(role: string): Promise<string> {
  const res = await restCall(stack.baseUrl, '/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: `modern-${role}-${Math.random().toString(36).slice(2, 8)}`, role, surfaces: ['mcp'] },
  });
  expect(res.status).toBe(201);
  return String(res.body?.key);
}

async function modernClient(key: string, capabilities: Record<string, unknown> = {}): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'e2e-modern-auth', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(new ModernTransport(new URL(stack.mcpUrl), { authProvider: { token: async () => key } }));
  clients.push(client);
  return client;
}

/** One raw 2026-07-28 `tools/call` with `authorization` (JSON answer): HTTP status, headers and body. */
async function rawCall(
  authorization: string | undefined,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<{ status: number; challenge: string | null; body: Record<string, unknown> }> {
  const res = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: {
      ...(authorization !== undefined ? { authorization } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
      // SEP-2243: dagu_* tools mirror `arguments.name` as Mcp-Param-Name.
      ...(typeof args.name === 'string' ? { 'mcp-param-name': args.name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        ...extra,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-modern-auth-raw', version: '1' },
        },
      },
    }),
  });
  const text = await res.text();
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
  for (const [name, spec] of [
    ['hello', 'steps:\n  - name: a\n    run: echo hello\n'],
    [
      'ask',
      'steps:\n  - id: review\n    action: human.task\n    with:\n      prompt: Pick one\n      form:\n        type: object\n        properties:\n          choice: {type: string}\n',
    ],
  ]) {
    const res = await restCall(stack.baseUrl, `/dags/${name ?? ''}`, {
      method: 'PUT',
      token: adminToken,
      body: { spec },
    });
    expect([200, 201]).toContain(res.status);
  }
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.stop();
});

test('no credential: 401 with the challenge, before any JSON-RPC', async () => {
  const res = await rawCall(undefined, 'dagu_read', { target: 'dags' });
  expect(res.status).toBe(401);
  expect(res.challenge).toContain('Bearer');
  expect(res.body).not.toHaveProperty('jsonrpc');
});

test('a viewer reads; dagu_execute is not listed, and called anyway is refused with unauthorized naming the role it needs', async () => {
  const client = await modernClient(await keyWithRole('viewer'));
  const { tools } = await client.listTools();
  // Issue 41 item 4: none of dagu_execute's actions is a viewer's; the preview keeps dagu_change.
  expect(tools.map((t) => t.name)).toEqual(['dagu_read', 'dagu_change']);
  const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
  expect(read.isError).toBeFalsy();
  expect(JSON.stringify(read.structuredContent)).toContain('hello');
  const refused = await client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'hello' } });
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent).toMatchObject({ code: 'unauthorized', action: 'start', dagName: 'hello' });
  expect(String((refused.structuredContent as Record<string, unknown> | undefined)?.message)).toContain('operator');
  // A viewer's preview is a read; applying is authoring (developer).
  const apply = await client.callTool({
    name: 'dagu_change',
    arguments: { mode: 'apply', name: 'viewer-dag', spec: 'steps:\n  - name: a\n    run: "true"\n' },
  });
  expect(apply.structuredContent).toMatchObject({ code: 'unauthorized' });
});

test('an operator runs a stored DAG to its end, but not caller-supplied YAML', async () => {
  const client = await modernClient(await keyWithRole('operator'));
  const run = await client.callTool(
    { name: 'dagu_execute', arguments: { action: 'start', name: 'hello', wait: true, waitTimeoutSeconds: 60 } },
    { timeout: 90_000 },
  );
  expect(run.isError).toBeFalsy();
  expect(run.structuredContent).toMatchObject({ completed: true, statusLabel: 'succeeded' });
  const inline = await client.callTool({
    name: 'dagu_execute',
    arguments: { action: 'start', name: 'inline-op', spec: 'steps:\n  - name: a\n    run: "true"\n' },
  });
  expect(inline.isError).toBe(true);
  expect(inline.structuredContent).toMatchObject({ code: 'unauthorized' });
  expect(String((inline.structuredContent as Record<string, unknown> | undefined)?.message)).toContain('developer');
}, 120_000);

test("a requestState is its principal's: another operator's retry with it is refused, nothing applied", async () => {
  const [alice, bob] = [`Bearer ${await keyWithRole('operator')}`, `Bearer ${await keyWithRole('operator')}`];
  const args = { action: 'start', name: 'ask', wait: true, waitTimeoutSeconds: 60 };
  const first = await rawCall(alice, 'dagu_execute', args);
  expect(first.status).toBe(200);
  const asked = first.body.result as Record<string, unknown>;
  expect(asked).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
  const stolen = await rawCall(bob, 'dagu_execute', args, {
    requestState: asked.requestState,
    inputResponses: { checkpoint: { action: 'accept', content: { choice: 'mine' } } },
  });
  expect(stolen.body.result).toMatchObject({
    isError: true,
    structuredContent: { code: 'invalid_tool_input', field: 'requestState' },
  });
  // Its owner still can answer it: the run was left waiting for them.
  const answered = await rawCall(alice, 'dagu_execute', args, {
    requestState: asked.requestState,
    inputResponses: { checkpoint: { action: 'accept', content: { choice: 'theirs' } } },
  });
  expect(answered.body.result).toMatchObject({
    resultType: 'complete',
    structuredContent: { completed: true, statusLabel: 'succeeded' },
  });
}, 120_000);
