/**
 * Issue 18 item 8 end to end: nine runs parked at a human task on the
 * default queue (eight slots) leave it free — an enqueued one-step run still
 * finishes at once — and deciding a parked run over REST resumes it without
 * queueing again. Before, the ninth parked run and the one-step run stayed
 * `queued` for as long as nobody answered.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { restCall } from './rest-call';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

let stack: Stack;
let client: Client;

beforeAll(async () => {
  stack = await startStack({ RUN_QUEUE_CONCURRENCY: '8', RUN_QUEUE_POLL_MS: '200' });
  client = await connectClient(stack.mcpUrl);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

const PARKING =
  'steps:\n  - id: review\n    action: human.task\n    with:\n      prompt: Go on?\n  - id: after\n    depends: [review]\n    run: echo resumed\n';

async function execute(args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = toolResult(
    await client.callTool({ name: 'dagu_execute', arguments: args }, undefined, { timeout: 60_000 }),
  );
  if (result.isError === true) throw new Error(JSON.stringify(result.structuredContent));
  return result.structuredContent ?? {};
}

async function statusOf(name: string, dagRunId: string): Promise<number> {
  const result = toolResult(await client.callTool({ name: 'dagu_read', arguments: { target: 'run', name, dagRunId } }));
  const data = (result.structuredContent?.data ?? {}) as Record<string, unknown>;
  return Number(data.status);
}

async function waitForStatus(name: string, dagRunId: string, status: number, ms = 20_000): Promise<void> {
  for (const until = Date.now() + ms; (await statusOf(name, dagRunId)) !== status;) {
    if (Date.now() > until)
      throw new Error(`${name}/${dagRunId} is ${await statusOf(name, dagRunId)}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('nine parked runs hold no slot of an eight-slot queue; a decision resumes one at once', async () => {
  const parked: Array<{ name: string; id: string }> = [];
  for (let i = 0; i < 9; i++) {
    const name = `parked-${i}`;
    const started = await execute({ action: 'enqueue', name, spec: PARKING });
    parked.push({ name, id: String(started.dagRunId) });
  }
  for (const { name, id } of parked) await waitForStatus(name, id, 7);

  const quick = await execute({
    action: 'enqueue',
    name: 'quick',
    spec: 'steps: [{name: s, run: "echo quick"}]\n',
    wait: true,
    waitTimeoutSeconds: 20,
  });
  expect(quick).toMatchObject({ completed: true, status: 4 });

  const first = parked[0] ?? { name: '', id: '' };
  const decided = await restCall(stack.baseUrl, `/dag-runs/${first.name}/${first.id}/steps/review/human-task`, {
    method: 'POST',
    body: { values: {} },
  });
  expect(decided.status).toBe(200);
  expect(decided.body).toMatchObject({ dagRunId: first.id, status: 1 });
  await waitForStatus(first.name, first.id, 4);
}, 120_000);
