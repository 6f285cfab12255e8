/**
 * Authors' text is bounded before it is parsed (issue 42 item 2; docs/security.md
 * "Bounds on authors' text"), attacked through the real stack with AUTH_MODE=builtin and
 * the MCP SDK client: a viewer's `dagu_change mode=preview` of `steps: [[[…]]]` used to
 * hold dag-service's only thread for 18 s (200 000 levels) and answer
 * `resource_unavailable` after 10 s (500 000 levels), while every other caller's DAG read
 * waited. Each is refused now, naming the bound, and other callers are answered meanwhile.
 * How fast is measured by `bench/yaml-attack.mjs`, not asserted here.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { NESTING_ATTACK_ERROR, nestingAttackSpec } from '../../packages/dag-spec/test-fixtures/nesting-attack';
import { validateDagChange } from '../../apps/dag-service/src/dags/dag-validation';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const HELLO = 'steps:\n  - name: hello\n    run: echo hello\n';
let stack: Stack;
let adminToken: string;
let viewer: Client;
let developer: Client;

const api = (path: string, init: RestInit = {}): Promise<RestReply> => restCall(stack.baseUrl, path, init);

async function createKey(role: string): Promise<string> {
  const res = await api('/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: `${role}-${Math.random().toString(36).slice(2, 8)}`, role, surfaces: ['mcp', 'rest_api'] },
  });
  expect(res.status).toBe(201);
  return String(res.body?.key);
}

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  const login = await api('/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
  expect((await api('/dags/stored-hello', { method: 'PUT', token: adminToken, body: { spec: HELLO } })).status).toBe(
    201,
  );
  viewer = await connectClient(stack.mcpUrl, { authorization: `Bearer ${await createKey('viewer')}` });
  developer = await connectClient(stack.mcpUrl, { authorization: `Bearer ${await createKey('developer')}` });
}, 90_000);

afterAll(async () => {
  await viewer?.close();
  await developer?.close();
  await stack?.stop();
});

describe('the nesting attack of issue 42 is refused before any parse', () => {
  test.each([200_000, 500_000])(
    "a viewer's dagu_change preview of `steps: ` and %i brackets is valid: false naming the bound",
    async (levels) => {
      const attack = viewer.callTool({
        name: 'dagu_change',
        arguments: { name: 'nested', spec: nestingAttackSpec(levels), mode: 'preview' },
      });
      // Another caller's read, sent while the attack is under way, is answered.
      const read = developer.callTool({ name: 'dagu_read', arguments: { target: 'dag_spec', name: 'stored-hello' } });
      const refused = toolResult(await attack);
      expect(refused.isError).not.toBe(true);
      expect(refused.structuredContent).toMatchObject({
        valid: false,
        applied: false,
        errors: [NESTING_ATTACK_ERROR],
      });
      expect(toolResult(await read).structuredContent).toMatchObject({ data: { name: 'stored-hello', spec: HELLO } });
    },
    60_000,
  );

  test('the gateway answers the attack as dag-service would: the same error and place, and whether the DAG is stored', async () => {
    const spec = nestingAttackSpec(200_000);
    // What dag-service itself answers for this text (its own validation, in process).
    const own = validateDagChange('stored-hello', spec).validation;
    const preview = toolResult(
      await viewer.callTool({ name: 'dagu_change', arguments: { name: 'stored-hello', spec, mode: 'preview' } }),
    );
    expect(preview.structuredContent).toMatchObject({ valid: false, errors: own.errors });
    // The REST validation shows the whole reply: the place, and whether a DAG of the name is stored.
    for (const [name, stored] of [
      ['stored-hello', true],
      ['not-stored', false],
    ] as const) {
      const validated = await api(`/dags/${name}/validate`, { method: 'POST', token: adminToken, body: { spec } });
      expect(validated.status).toBe(200);
      expect(validated.body).toEqual({ valid: false, errors: own.errors, errorLocations: own.errorLocations, stored });
    }
    const put = await api('/dags/stored-hello', { method: 'PUT', token: adminToken, body: { spec } });
    expect(put.status).toBe(400);
    expect(JSON.stringify(put.body)).toContain(own.errors[0] ?? 'missing');
    // Nothing was written: the stored spec is the one before.
    const read = toolResult(
      await developer.callTool({ name: 'dagu_read', arguments: { target: 'dag_spec', name: 'stored-hello' } }),
    );
    expect(read.structuredContent).toMatchObject({ data: { spec: HELLO } });
  }, 60_000);

  test('an inline start of the attack by a developer is refused as invalid_tool_input', async () => {
    const start = toolResult(
      await developer.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'nested', targetType: 'inline_spec', spec: nestingAttackSpec(200_000) },
      }),
    );
    expect(start.isError).toBe(true);
    expect(start.structuredContent).toMatchObject({ code: 'invalid_tool_input' });
    expect(JSON.stringify(start.structuredContent)).toContain('collections nest deeper than 64 levels');
  }, 60_000);

  test('a large inline start (past RUN_SPEC_PARSE_THREAD_MIN_BYTES) is parsed on run-service’s thread and runs', async () => {
    // 300 steps of about 250 characters: some 75 KB, over the 64 KiB from which run-service
    // parses a spec on its thread and the gateway parses the body on its own.
    const lines = ['steps:'];
    for (let i = 0; i < 300; i += 1) lines.push(`  - name: s${i}`, `    run: echo "step ${i} ${'x'.repeat(200)}"`);
    const spec = `${lines.join('\n')}\n`;
    expect(spec.length).toBeGreaterThan(64 * 1024);
    const started = toolResult(
      await developer.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'large-inline', spec, wait: true, waitTimeoutSeconds: 45 },
      }),
    );
    expect(started.isError).toBeFalsy();
    expect(started.structuredContent).toMatchObject({ targetType: 'inline_spec', completed: true, status: 4 });
  }, 90_000);

  test('a wiki page whose frontmatter nests 100 000 levels is 400 naming the bound', async () => {
    const content = `---\ntags: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n---\nbody\n`;
    const res = await api('/wiki/team/pages/nested', { method: 'PUT', token: adminToken, body: { content } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', field: 'content' });
    expect(String(res.body?.message)).toContain('nests collections deeper than 64 levels at line 2, column 70');
  }, 60_000);
});
