/**
 * Human tasks and approvals answered inside the MCP client (issue 22 §2):
 * `dagu_execute … wait=true` reaches a checkpoint, the gateway asks the
 * person with an elicitation, applies the answer as the REST checkpoint
 * routes do, and the wait goes on to the run's end. Two gateway replicas
 * behind the round-robin proxy, so the client's answer (a POST) may reach
 * the other replica than the one waiting. Legacy era (sessions): the SDK v1
 * client with the elicitation capability and a progress token.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
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

  test('without a progress token the client is not asked: the waiting result as before', async () => {
    const { client, asked } = await askingClient([]);
    const { structured } = await executeAndWait(client, 'ask-noprogress-e2e', false);
    expect(asked).toHaveLength(0);
    expect(structured).toMatchObject({ completed: false, status: 7 });
    expect(structured).not.toHaveProperty('checkpointQuestion');
    await client.close();
  }, 150_000);
});
