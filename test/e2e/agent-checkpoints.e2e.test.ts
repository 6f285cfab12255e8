/**
 * A DAG-as-tool call on a published agent's endpoint whose run stops at a
 * human task or an approval asks the person in their client (issue 24 item 5
 * with issue 22 §2), the same way `dagu_execute` on `/mcp` does: by
 * elicitation in the session revisions (only when the request carries a
 * progress token), by `input_required` with a sealed `requestState` in
 * 2026-07-28. The answer goes through the REST checkpoint operations as the
 * agent, bounded by its binding author's role at the moment of the answer.
 * Also the `internal_error` wire form of an agent endpoint, provoked by a real
 * fault of the owning service's store (issue 24 item 7).
 *
 * Two gateway replicas behind the round-robin proxy: the client's answer may
 * reach the other replica than the one waiting. SDK v1 client for the
 * session era, the SDK's v2 client (`@modelcontextprotocol/client`, pinned to
 * 2026-07-28) and raw HTTP for the stateless era.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Pool } from 'pg';
import { restCall, type RestInit } from './rest-call';
import { startStack, TEST_DATABASE_URL, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-ck' };
const WS = 'ops';
const MODERN = '2026-07-28';

let stack: Stack;
let adminToken = '';
let pool: Pool;
const closers: (() => Promise<void>)[] = [];

const api = (path: string, init: RestInit = {}) => restCall(stack.baseUrl, path, { token: adminToken, ...init });
/** The agent's endpoint through the round-robin proxy (either replica answers each request). */
const endpoint = (agent: string): string => `${stack.baseUrl}/mcp/v1/${WS}/${agent}`;

/** A human task with a form, then an approval gate, then a step that publishes the answer as an output. */
const RELEASE_DAG = [
  'description: Releases the service after a person chose where and approved.',
  'steps:',
  '  - id: review',
  '    action: human.task',
  '    with:',
  '      prompt: Choose the deployment target',
  '      form:',
  '        type: object',
  '        properties:',
  '          environment: {type: string, enum: [staging, production]}',
  '        required: [environment]',
  '  - id: gate',
  '    depends: [review]',
  '    run: "true"',
  '    approval: {prompt: Ship it?}',
  '  - id: deploy',
  '    depends: [gate]',
  '    run: echo "TARGET=${steps.review.outputs.environment}" >> "$DAGU_OUTPUT_FILE"',
  '    outputs: [TARGET]',
  '',
].join('\n');

/** A user with `role`, logged in: their token. */
async function userToken(username: string, role: string): Promise<{ id: string; token: string }> {
  const password = `${username}-password-1`;
  const created = await api('/users', { method: 'POST', body: { username, password, role } });
  expect(created.status).toBe(201);
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: { username, password } });
  expect(login.status).toBe(200);
  return { id: String(created.body?.id), token: String(login.body?.token) };
}

/** Publishes agent `slug` with the release DAG as tool `release`, bound by `token`'s user; resolves with a key. */
async function publishReleaseAgent(slug: string, token: string): Promise<string> {
  const as = { token };
  expect((await api(`/workspaces/${WS}/agents`, { ...as, method: 'POST', body: { slug, title: slug } })).status).toBe(
    201,
  );
  const tools = [{ kind: 'dag', dag: 'release', name: 'release', waitSeconds: 120 }];
  expect((await api(`/workspaces/${WS}/agents/${slug}/tools`, { ...as, method: 'PUT', body: { tools } })).status).toBe(
    200,
  );
  const state = { state: 'published' };
  expect((await api(`/workspaces/${WS}/agents/${slug}`, { ...as, method: 'PATCH', body: state })).status).toBe(200);
  const key = await api(`/workspaces/${WS}/agents/${slug}/keys`, { ...as, method: 'POST', body: { name: 'ck' } });
  expect(key.status).toBe(201);
  return String(key.body?.key);
}

/** A v1 client of the agent declaring elicitation; its handler answers with `answers` in turn. */
async function askingClient(
  agent: string,
  key: string,
  answers: ((params: Record<string, unknown>) => Promise<ElicitResult> | ElicitResult)[],
): Promise<{ client: Client; asked: Record<string, unknown>[] }> {
  const client = new Client({ name: 'e2e-agent-asked', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked: Record<string, unknown>[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    const answer = answers[asked.length - 1];
    if (answer === undefined) throw new Error(`unexpected elicitation ${asked.length}`);
    return answer(request.params);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint(agent)), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  closers.push(() => client.close());
  return { client, asked };
}

/** Calls the `release` DAG tool with a progress token (the SDK adds it with `onprogress`). */
async function callRelease(client: Client): Promise<{ result: CallToolResult; out: Record<string, unknown> }> {
  const result = (await client.callTool({ name: 'release', arguments: {} }, undefined, {
    onprogress: () => undefined,
    timeout: 150_000,
  })) as CallToolResult;
  return { result, out: result.structuredContent ?? {} };
}

const textOf = (result: CallToolResult): string => (result.content[0]?.type === 'text' ? result.content[0].text : '');

type RunDetail = { status: number; steps: { name: string; statusLabel: string; decision?: unknown }[] };

/** The ids of the release DAG's runs (REST, newest first, up to 100). */
async function releaseRunIds(): Promise<string[]> {
  const res = await api('/dag-runs?name=release&limit=100');
  expect(res.status).toBe(200);
  return ((res.body?.items ?? []) as { dagRunId: string }[]).map((run) => run.dagRunId);
}

/** The run as REST shows it to the admin. */
async function restRun(dagRunId: unknown): Promise<RunDetail> {
  const res = await api(`/dag-runs/release/${String(dagRunId)}`);
  expect(res.status).toBe(200);
  return res.body as unknown as RunDetail;
}

beforeAll(async () => {
  stack = await startStack(
    { AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password },
    { gatewayReplicas: 2 },
  );
  pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
  const put = await api('/dags/release', { method: 'PUT', body: { spec: RELEASE_DAG } });
  expect([200, 201]).toContain(put.status);
}, 150_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await pool?.end();
  await stack?.stop();
});

describe('session revisions: the DAG tool asks by elicitation', () => {
  let key = '';
  beforeAll(async () => {
    key = await publishReleaseAgent('release-desk', (await userToken('riley', 'manager')).token);
  });

  test('the human task and the approval are answered in the client; the run ends with the answer as its output', async () => {
    const { client, asked } = await askingClient('release-desk', key, [
      () => ({ action: 'accept', content: { environment: 'production' } }),
      () => ({ action: 'accept', content: { decision: 'approve' } }),
    ]);
    const { result, out } = await callRelease(client);
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({
      statusLabel: 'succeeded',
      completed: true,
      outputs: { deploy: { TARGET: 'production' } },
    });
    expect(out).not.toHaveProperty('checkpointQuestion');
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatchObject({
      mode: 'form',
      message: expect.stringContaining('Choose the deployment target'),
      requestedSchema: { properties: { environment: { enum: ['staging', 'production'] } }, required: ['environment'] },
    });
    expect(asked[1]).toMatchObject({
      message: expect.stringContaining('Ship it?'),
      requestedSchema: { properties: { decision: { enum: ['approve', 'reject'] } } },
    });
    // Decided as REST decides, by the agent (its own audit name), not by whoever configured it.
    const run = await restRun(out.dagRunId);
    const agent = { kind: 'agent', name: `${WS}/release-desk` };
    expect(run.steps.find((s) => s.name === 'review')?.decision).toMatchObject({ by: agent, outcome: 'completed' });
    expect(run.steps.find((s) => s.name === 'gate')?.decision).toMatchObject({ by: agent });
  }, 180_000);

  test('declining leaves the run waiting and says so', async () => {
    const { client, asked } = await askingClient('release-desk', key, [() => ({ action: 'decline' })]);
    const { result, out } = await callRelease(client);
    expect(asked).toHaveLength(1);
    expect(out).toMatchObject({
      status: 7,
      completed: false,
      waiting: true,
      checkpointQuestion: { stepName: 'review', outcome: 'declined' },
    });
    expect(textOf(result)).toContain('the run is still waiting');
    expect((await restRun(out.dagRunId)).status).toBe(7);
  }, 180_000);

  test('the binding author demoted while the person answers: the answer is refused, the run still waits', async () => {
    const casey = await userToken('casey', 'manager');
    const demoteKey = await publishReleaseAgent('release-demote', casey.token);
    const { client } = await askingClient('release-demote', demoteKey, [
      async () => {
        // Between the question and the answer, the person who configured the agent loses the operator role.
        const demoted = await api(`/users/${casey.id}`, { method: 'PATCH', body: { role: 'viewer' } });
        expect(demoted.status).toBe(200);
        return { action: 'accept', content: { environment: 'staging' } };
      },
    ]);
    const { result, out } = await callRelease(client);
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({
      status: 7,
      waiting: true,
      checkpointQuestion: { stepName: 'review', outcome: 'refused' },
    });
    expect(String((out.checkpointQuestion as { message?: unknown }).message)).toContain('operator');
    const run = await restRun(out.dagRunId);
    expect(run.status).toBe(7);
    expect(run.steps.find((s) => s.name === 'review')).toMatchObject({ statusLabel: 'waiting' });
  }, 180_000);
});

describe('2026-07-28: the DAG tool asks with input_required', () => {
  let key = '';
  let author = { id: '', token: '' };
  beforeAll(async () => {
    author = await userToken('sasha', 'manager');
    key = await publishReleaseAgent('release-modern', author.token);
  });

  test("the SDK v2 client's elicitation handler answers both checkpoints; the run ends", async () => {
    const client = new ModernClient(
      { name: 'e2e-agent-mrtr', version: '1.0.0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: MODERN } } },
    );
    const messages: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      const message = String((request.params as { message?: unknown }).message);
      messages.push(message);
      const content: Record<string, string> = message.includes('Ship it?')
        ? { decision: 'approve' }
        : { environment: 'staging' };
      return { action: 'accept' as const, content };
    });
    await client.connect(
      new ModernTransport(new URL(endpoint('release-modern')), { authProvider: { token: async () => key } }),
    );
    closers.push(() => client.close());
    const result = await client.callTool({ name: 'release', arguments: {} }, { timeout: 150_000 });
    expect(result.structuredContent).toMatchObject({
      statusLabel: 'succeeded',
      completed: true,
      outputs: { deploy: { TARGET: 'staging' } },
    });
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain('Choose the deployment target');
  }, 180_000);

  /** One raw 2026-07-28 `tools/call` of `release` (JSON answer), with the retry channel when given. */
  async function mrtrCall(id: number, retry: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const res = await fetch(endpoint('release-modern'), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'release',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'release',
          arguments: {},
          ...retry,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
            'io.modelcontextprotocol/clientInfo': { name: 'e2e-agent-raw', version: '1' },
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { result: Record<string, unknown> }).result;
  }

  test('raw HTTP: input_required with the form; declining leaves the run waiting and says so', async () => {
    const first = await mrtrCall(1);
    expect(first).toMatchObject({
      resultType: 'input_required',
      requestState: expect.any(String),
      inputRequests: {
        checkpoint: {
          method: 'elicitation/create',
          params: { message: expect.stringContaining('Choose the deployment target') },
        },
      },
    });
    const declined = await mrtrCall(2, {
      requestState: first.requestState,
      inputResponses: { checkpoint: { action: 'decline' } },
    });
    expect(declined).toMatchObject({
      resultType: 'complete',
      structuredContent: { status: 7, waiting: true, checkpointQuestion: { stepName: 'review', outcome: 'declined' } },
    });
    expect(JSON.stringify(declined.content)).toContain('the run is still waiting');
  }, 180_000);

  test('raw HTTP: the binding author demoted between the rounds: the answer is refused and nothing is applied', async () => {
    const before = new Set(await releaseRunIds());
    const first = await mrtrCall(3);
    expect(first.resultType).toBe('input_required');
    const started = (await releaseRunIds()).filter((id) => !before.has(id));
    expect(started).toHaveLength(1);
    const demoted = await api(`/users/${author.id}`, { method: 'PATCH', body: { role: 'viewer' } });
    expect(demoted.status).toBe(200);
    const refused = await mrtrCall(4, {
      requestState: first.requestState,
      inputResponses: { checkpoint: { action: 'accept', content: { environment: 'production' } } },
    });
    expect(refused).toMatchObject({ isError: true, structuredContent: { code: 'unauthorized' } });
    // The run the first round started still waits at its task: nothing was applied.
    const run = await restRun(started[0]);
    expect(run.status).toBe(7);
    expect(run.steps.find((s) => s.name === 'review')).toMatchObject({ statusLabel: 'waiting' });
  }, 180_000);
});

describe('internal_error on an agent endpoint (issue 24 item 7)', () => {
  test("a real fault in the owning service's store: isError internal_error with details.requestId, nothing more revealed", async () => {
    const key = await publishReleaseAgent('release-fault', (await userToken('jordan', 'manager')).token);
    const client = new Client({ name: 'e2e-agent-fault', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint('release-fault')), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    closers.push(() => client.close());
    // run-service reads a DAG's own profile on every start; the table gone is a store fault no rule expects.
    const schema = stack.schemaOf('run-service');
    await pool.query(`ALTER TABLE "${schema}".dag_profiles RENAME TO dag_profiles_gone`);
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name: 'release', arguments: {} })) as CallToolResult;
    } finally {
      await pool.query(`ALTER TABLE "${schema}".dag_profiles_gone RENAME TO dag_profiles`);
    }
    expect(result.isError).toBe(true);
    const error = result.structuredContent ?? {};
    expect(error).toMatchObject({ code: 'internal_error', details: { requestId: expect.any(String) } });
    const requestId = String((error.details as { requestId: string }).requestId);
    expect(JSON.stringify(error)).not.toContain('dag_profiles');
    // The id the client got is the one the logs carry, with the cause.
    const logged = stack
      .output()
      .split('\n')
      .filter((line) => line.includes(requestId));
    expect(logged.some((line) => line.includes('dag_profiles'))).toBe(true);
    // The store back, the same tool works again: it was the fault, not the tool.
    const { client: asking } = await askingClient('release-fault', key, [() => ({ action: 'decline' })]);
    expect((await callRelease(asking)).out).toMatchObject({ status: 7 });
  }, 180_000);
});
