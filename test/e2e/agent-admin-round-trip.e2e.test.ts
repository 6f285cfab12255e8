/**
 * Issue 53 item 5, agent administration that round-trips, through the real
 * stack over plain HTTP: a catalog read (and an agent read) is accepted back
 * unchanged by the write, one binding is added, replaced and removed by its
 * tool name, and the endpoints in answers are absolute URLs built from
 * `PUBLIC_URL` (docs/agents.md "REST reference").
 */
import { restCall, type RestInit } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-53' };
const WS = 'roundtrip';
const PUBLIC_URL = 'https://agents.example.com/dagu';

let stack: Stack;
let token = '';
const api = (path: string, init: RestInit = {}) => restCall(stack.baseUrl, path, { token, ...init });
const agentPath = (slug: string): string => `/workspaces/${WS}/agents/${slug}`;

beforeAll(async () => {
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    PUBLIC_URL,
  });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  token = String(login.body?.token);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

async function newAgent(slug: string, tools: unknown[]): Promise<void> {
  expect((await api(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug, title: slug } })).status).toBe(201);
  expect((await api(`${agentPath(slug)}/tools`, { method: 'PUT', body: { tools } })).status).toBe(200);
}

type Binding = Record<string, unknown> & { toolName: string; createdAt: string; createdBy: unknown };
const toolsOf = (body: Record<string, unknown> | undefined): Binding[] => (body?.tools ?? []) as Binding[];

test('a catalog read is accepted unchanged by the write; authors and times are kept', async () => {
  await newAgent('echo', [
    { kind: 'dagu_tool', tool: 'dagu_read' },
    { kind: 'dag', dag: 'refund', name: 'refund_order', waitSeconds: 5 },
  ]);
  const read = await api(`${agentPath('echo')}/tools`);
  expect(read.status).toBe(200);
  const written = await api(`${agentPath('echo')}/tools`, { method: 'PUT', body: read.body });
  expect(written.status).toBe(200);
  expect(toolsOf(written.body)).toEqual(toolsOf(read.body));
  expect(written.body?.version).toBe(Number(read.body?.version) + 1);
});

test('an agent read is accepted unchanged by PATCH (read-only fields ignored)', async () => {
  await newAgent('patchy', [{ kind: 'dagu_tool', tool: 'dagu_read' }]);
  const read = await api(agentPath('patchy'));
  expect(read.status).toBe(200);
  const patched = await api(agentPath('patchy'), { method: 'PATCH', body: { ...read.body, title: 'Renamed' } });
  expect(patched.status).toBe(200);
  expect(patched.body?.title).toBe('Renamed');
  expect(patched.body?.slug).toBe('patchy');
  // The catalog is changed only through …/tools: tools in a PATCH are ignored.
  expect((await api(`${agentPath('patchy')}/tools`)).body?.tools).toEqual(read.body?.tools);
  // Unknown fields are still refused, by name.
  const typo = await api(agentPath('patchy'), { method: 'PATCH', body: { titel: 'x' } });
  expect(typo.status).toBe(400);
  expect(String(typo.body?.message)).toContain('titel');
});

test('PUT and DELETE …/tools/{toolName} add, replace and remove one binding', async () => {
  await newAgent('single', [
    { kind: 'dagu_tool', tool: 'dagu_read' },
    { kind: 'dag', dag: 'billing-report' },
  ]);
  const before = toolsOf((await api(`${agentPath('single')}/tools`)).body);
  // Added last; a binding without name gets the path's tool name.
  const added = await api(`${agentPath('single')}/tools/refund_it`, {
    method: 'PUT',
    body: { kind: 'dag', dag: 'refund' },
  });
  expect(added.status).toBe(200);
  expect(toolsOf(added.body).map((t) => t.toolName)).toEqual(['dagu_read', 'billing-report', 'refund_it']);
  // Replaced in place; the other bindings keep their author and time.
  const replaced = await api(`${agentPath('single')}/tools/dagu_read`, {
    method: 'PUT',
    body: { kind: 'dagu_tool', tool: 'dagu_read', description: 'Read the billing DAGs.' },
  });
  expect(replaced.status).toBe(200);
  const tools = toolsOf(replaced.body);
  expect(tools.map((t) => t.toolName)).toEqual(['dagu_read', 'billing-report', 'refund_it']);
  expect(tools[0]?.description).toBe('Read the billing DAGs.');
  expect(tools[1]).toEqual(before[1]);
  // A binding as read is accepted back unchanged.
  const again = await api(`${agentPath('single')}/tools/billing-report`, { method: 'PUT', body: tools[1] });
  expect(again.status).toBe(200);
  expect(toolsOf(again.body)[1]).toEqual(before[1]);
  // A name that contradicts the path is refused, naming the field.
  const contradicting = await api(`${agentPath('single')}/tools/x`, {
    method: 'PUT',
    body: { kind: 'dag', dag: 'refund', name: 'y' },
  });
  expect(contradicting.status).toBe(400);
  expect(contradicting.body?.field).toBe('name');
  // Removed; a second removal is 404 on toolName.
  expect((await api(`${agentPath('single')}/tools/billing-report`, { method: 'DELETE' })).status).toBe(204);
  const after = await api(`${agentPath('single')}/tools`);
  expect(toolsOf(after.body).map((t) => t.toolName)).toEqual(['dagu_read', 'refund_it']);
  const gone = await api(`${agentPath('single')}/tools/billing-report`, { method: 'DELETE' });
  expect(gone.status).toBe(404);
  expect(gone.body?.field).toBe('toolName');
});

test('endpoints in answers are absolute URLs built from PUBLIC_URL', async () => {
  await newAgent('urls', [{ kind: 'dagu_tool', tool: 'dagu_read' }]);
  const expected = `${PUBLIC_URL}/mcp/v1/${WS}/urls`;
  expect((await api(agentPath('urls'))).body?.endpoint).toBe(expected);
  const listed = (await api(`/workspaces/${WS}/agents`)).body?.items as { slug: string; endpoint: string }[];
  expect(listed.find((a) => a.slug === 'urls')?.endpoint).toBe(expected);
  const key = await api(`${agentPath('urls')}/keys`, { method: 'POST', body: { name: 'ci' } });
  expect(key.status).toBe(201);
  expect(key.body?.endpoint).toBe(expected);
});
