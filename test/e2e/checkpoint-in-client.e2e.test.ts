/**
 * Human tasks and approvals answered inside the MCP client (issue 22 §2):
 * `dagu_execute … wait=true` reaches a checkpoint, the gateway asks the
 * person with an elicitation, applies the answer as the REST checkpoint
 * routes do, and the wait goes on to the run's end. Two gateway replicas
 * behind the round-robin proxy, so the client's answer (a POST) may reach
 * the other replica than the one waiting. Legacy era (sessions): the SDK v1
 * client with the elicitation capability, with or without a progress token.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { startStack, type Stack } from './stack';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({}, { gatewayReplicas: 2 });
}, 150_000);

afterAll(async () => {
  await stack?.stop();
});

/** A human task with a form, then an approval gate, then a step that uses the answer. */
const SPEC = [
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
  '    run: echo "deploying to ${steps.review.outputs.environment}"',
  '',
].join('\n');

/** A v1 client declaring elicitation whose handler answers with `answers` in turn (recording the requests). */
async function askingClient(
  answers: ((request: ElicitRequest) => ElicitResult)[],
): Promise<{ client: Client; asked: ElicitRequest[] }> {
  const client = new Client({ name: 'e2e-asked', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked: ElicitRequest[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request);
    const answer = answers[asked.length - 1];
    if (answer === undefined) throw new Error(`unexpected elicitation ${asked.length}`);
    return answer(request);
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl)));
  return { client, asked };
}

/** `dagu_execute` start + wait of SPEC under `name`, with a progress token (the SDK adds it with `onprogress`). */
async function executeAndWait(client: Client, name: string, withProgress = true) {
  const progress: string[] = [];
  const result = await client.request(
    {
      method: 'tools/call',
      params: {
        name: 'dagu_execute',
        arguments: { action: 'start', name, spec: SPEC, wait: true, waitTimeoutSeconds: 90 },
      },
    },
    CallToolResultSchema,
    {
      timeout: 120_000,
      ...(withProgress ? { onprogress: (p: { message?: string }) => void progress.push(p.message ?? '') } : {}),
    },
  );
  return { result, structured: result.structuredContent as Record<string, unknown>, progress };
}

describe('legacy era: elicitation', () => {
  test('a human task and an approval answered in the client; a wrong answer is asked again; the run goes on to its end', async () => {
    const { client, asked } = await askingClient([
      () => ({ action: 'accept', content: { environment: 'moon' } }),
      () => ({ action: 'accept', content: { environment: 'production' } }),
      () => ({ action: 'accept', content: { decision: 'approve' } }),
    ]);
    const { result, structured } = await executeAndWait(client, 'ask-e2e');
    expect(result.isError).toBeFalsy();
    expect(structured).toMatchObject({ completed: true, statusLabel: 'succeeded' });
    expect(structured).not.toHaveProperty('checkpointQuestion');
    expect(asked).toHaveLength(3);
    expect(asked[0]?.params).toMatchObject({
      message: expect.stringContaining('Choose the deployment target'),
      requestedSchema: {
        type: 'object',
        properties: { environment: { type: 'string', enum: ['staging', 'production'] } },
        required: ['environment'],
      },
    });
    expect(asked[1]?.params.message).toMatch(/^Your answer was refused/);
    expect(asked[2]?.params).toMatchObject({
      message: expect.stringContaining('Ship it?'),
      requestedSchema: { properties: { decision: { enum: ['approve', 'reject'] } }, required: ['decision'] },
    });
    // The answer became the step's output, as a REST completion does.
    const run = structured.run as { steps: { name: string; statusLabel: string }[] };
    expect(run.steps.map((s) => [s.name, s.statusLabel])).toEqual([
      ['review', 'succeeded'],
      ['gate', 'succeeded'],
      ['deploy', 'succeeded'],
    ]);
    const log = await client.callTool({
      name: 'dagu_read',
      arguments: { target: 'step_log', name: 'ask-e2e', dagRunId: structured.dagRunId, stepName: 'deploy' },
    });
    expect(JSON.stringify(log.structuredContent)).toContain('deploying to production');
    await client.close();
  }, 150_000);

  test('declining or cancelling leaves the run waiting and says so', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const { client, asked } = await askingClient([() => ({ action })]);
      const { result, structured } = await executeAndWait(client, `ask-${action}-e2e`);
      expect(asked).toHaveLength(1);
      expect(structured).toMatchObject({
        completed: false,
        status: 7,
        checkpointQuestion: { stepName: 'review', outcome: action === 'decline' ? 'declined' : 'cancelled' },
      });
      const text = (result.content[0] as { text: string }).text;
      expect(text).toContain('the run is still waiting');
      await client.close();
    }
  }, 150_000);

  test('without a progress token the client is still asked, and its answers take the run to its end', async () => {
    const { client, asked } = await askingClient([
      () => ({ action: 'accept', content: { environment: 'staging' } }),
      () => ({ action: 'accept', content: { decision: 'approve' } }),
    ]);
    const { result, structured, progress } = await executeAndWait(client, 'ask-noprogress-e2e', false);
    expect(progress).toEqual([]);
    expect(asked).toHaveLength(2);
    expect(result.isError).toBeFalsy();
    expect(structured).toMatchObject({ completed: true, statusLabel: 'succeeded' });
    await client.close();
  }, 150_000);

  test('without a progress token and nobody answering, the call still ends within 50 s (dagu-model §10), the run waiting', async () => {
    // The handler never answers: the question stays open until the call's bound ends it. A wait of
    // 300 s asked for; without a progress token the whole call, asking included, ends within 50 s.
    const client = new Client({ name: 'e2e-silent', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked += 1;
      return new Promise<ElicitResult>(() => undefined);
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl)));
    const started = Date.now();
    const result = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'dagu_execute',
          arguments: { action: 'start', name: 'ask-silent-e2e', spec: SPEC, wait: true, waitTimeoutSeconds: 300 },
        },
      },
      CallToolResultSchema,
      { timeout: 60_000 },
    );
    expect(asked).toBe(1);
    expect(Date.now() - started).toBeGreaterThan(45_000);
    expect(Date.now() - started).toBeLessThan(55_000);
    expect(result.structuredContent).toMatchObject({
      completed: false,
      status: 7,
      checkpointQuestion: { stepName: 'review', outcome: 'timeout' },
    });
    await client.close();
  }, 150_000);
});

const MODERN = '2026-07-28';
const ELICITING = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'e2e-raw-mrtr', version: '1' },
};

/** One raw 2026-07-28 `tools/call` of dagu_execute (JSON answer), with the retry channel when given. */
async function mrtrCall(name: string, id: number, retry: Record<string, unknown> = {}) {
  const res = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 'dagu_execute',
      'mcp-param-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'dagu_execute',
        arguments: { action: 'start', name, spec: SPEC, wait: true, waitTimeoutSeconds: 90 },
        ...retry,
        _meta: ELICITING,
      },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: Record<string, unknown> }).result;
}

describe('modern era: MRTR (input_required / inputResponses)', () => {
  test('raw HTTP: input_required with the form, a wrong answer asked again, the approval, then the run ends; every round may reach either replica', async () => {
    const first = await mrtrCall('mrtr-raw-e2e', 1);
    expect(first).toMatchObject({
      resultType: 'input_required',
      requestState: expect.any(String),
      inputRequests: {
        checkpoint: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: expect.stringContaining('Choose the deployment target'),
            requestedSchema: { properties: { environment: { enum: ['staging', 'production'] } } },
          },
        },
      },
    });
    expect(first).not.toHaveProperty('content');
    const wrong = await mrtrCall('mrtr-raw-e2e', 2, {
      requestState: first.requestState,
      inputResponses: { checkpoint: { action: 'accept', content: { environment: 'moon' } } },
    });
    expect(wrong).toMatchObject({
      resultType: 'input_required',
      inputRequests: { checkpoint: { params: { message: expect.stringMatching(/^Your answer was refused/) } } },
    });
    const approval = await mrtrCall('mrtr-raw-e2e', 3, {
      requestState: wrong.requestState,
      inputResponses: { checkpoint: { action: 'accept', content: { environment: 'staging' } } },
    });
    expect(approval).toMatchObject({
      resultType: 'input_required',
      inputRequests: { checkpoint: { params: { message: expect.stringContaining('Ship it?') } } },
    });
    // A state is sealed: a tampered one is refused, nothing applied.
    const tampered = await mrtrCall('mrtr-raw-e2e', 4, {
      requestState: `${String(approval.requestState).slice(0, -4)}AAAA`,
      inputResponses: { checkpoint: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(tampered).toMatchObject({
      isError: true,
      structuredContent: { code: 'invalid_tool_input', field: 'requestState' },
    });
    const done = await mrtrCall('mrtr-raw-e2e', 5, {
      requestState: approval.requestState,
      inputResponses: { checkpoint: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(done).toMatchObject({
      resultType: 'complete',
      structuredContent: { completed: true, statusLabel: 'succeeded' },
    });
  }, 150_000);

  test('raw HTTP: decline leaves the run waiting and says so', async () => {
    const first = await mrtrCall('mrtr-decline-e2e', 1);
    const declined = await mrtrCall('mrtr-decline-e2e', 2, {
      requestState: first.requestState,
      inputResponses: { checkpoint: { action: 'decline' } },
    });
    expect(declined).toMatchObject({
      resultType: 'complete',
      structuredContent: {
        completed: false,
        status: 7,
        checkpointQuestion: { outcome: 'declined', stepName: 'review' },
      },
    });
  }, 150_000);

  test('SDK v2 client: its elicitation handler answers, the client repeats the call, the run ends', async () => {
    const client = new ModernClient(
      { name: 'e2e-mrtr', version: '1.0.0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: MODERN } } },
    );
    const messages: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      const message = String((request.params as { message?: unknown }).message);
      messages.push(message);
      const content: Record<string, string> = message.includes('Ship it?')
        ? { decision: 'approve' }
        : { environment: 'production' };
      return { action: 'accept' as const, content };
    });
    await client.connect(new ModernTransport(new URL(stack.mcpUrl)));
    const result = await client.callTool(
      {
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'mrtr-sdk-e2e', spec: SPEC, wait: true, waitTimeoutSeconds: 90 },
      },
      { timeout: 120_000 },
    );
    expect(result.structuredContent).toMatchObject({ completed: true, statusLabel: 'succeeded' });
    expect(messages).toHaveLength(2);
    await client.close();
  }, 150_000);
});
