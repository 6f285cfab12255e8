/**
 * A resumed SSE request whose gateway died is answered (issue 18 item 3,
 * dagu-model §10): two gateway replicas behind a round-robin proxy; an SDK
 * client calls `dagu_execute` with `wait` and a progress token (answered as
 * SSE, primed); the replica serving it is killed with SIGKILL mid-call; the
 * SDK resumes the stream with `Last-Event-ID` on the other replica, which
 * must answer within seconds: an `isError` result `resource_unavailable`
 * with `details: {outcome: "unknown", requestId, dagRunId}`. The run itself
 * goes on (run-service owns it).
 *
 * It stops no dependency, so it runs on the machine's Redis and PostgreSQL
 * like the end-to-end tests.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, startStack, type Stack } from '../e2e/stack';
import { report, sleep } from './fault-env';
import { restJson } from './workload';

/** How soon after the kill the resumed request must be answered, ms: lease (3 s) + confirmation + poll + SDK retry. */
const ANSWER_BOUND_MS = 15_000;

let stack: Stack;
let client: Client;

beforeAll(async () => {
  stack = await startStack({}, { gatewayReplicas: 2 });
  client = await connectClient(stack.mcpUrl);
  const applied = await client.callTool({
    name: 'dagu_change',
    arguments: { mode: 'apply', name: 'orphan-wait', spec: 'steps:\n  - name: nap\n    run: sleep 20\n' },
  });
  expect(applied.isError).toBeFalsy();
}, 90_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

test('the replica resuming the stream answers resource_unavailable, outcome unknown, with requestId and dagRunId', async () => {
  const proxy = stack.proxy;
  if (proxy === undefined) throw new Error('two replicas run behind a proxy');
  const routedBefore = proxy.routed.length;
  const call = client.request(
    {
      method: 'tools/call',
      params: { name: 'dagu_execute', arguments: { action: 'start', name: 'orphan-wait', wait: true } },
    },
    CallToolResultSchema,
    { timeout: 60_000, onprogress: () => undefined, resetTimeoutOnProgress: true },
  );
  const answered = call.then(
    (result) => ({ result, at: Date.now() }),
    (error: unknown) => ({ error, at: Date.now() }),
  );
  // The run is started (its id noted in the owner record) before the gateway dies.
  await sleep(2_500);
  const post = proxy.routed.slice(routedBefore).find((line) => line.startsWith('POST '));
  const owner = stack.gateways.find((g) => post === `POST ${g.port}`);
  if (owner === undefined)
    throw new Error(`no POST routed to a gateway: ${proxy.routed.slice(routedBefore).join(', ')}`);
  const killedAt = Date.now();
  await owner.kill();

  const outcome = await answered;
  if ('error' in outcome) throw new Error(`the call failed instead: ${String(outcome.error)}`);
  const { result, at } = outcome;
  expect(result.isError).toBe(true);
  const object = result.structuredContent as { code?: string; details?: Record<string, unknown> } | undefined;
  expect(object).toMatchObject({
    code: 'resource_unavailable',
    details: { outcome: 'unknown', requestId: expect.any(String), dagRunId: expect.any(String) },
  });
  expect(at - killedAt).toBeLessThan(ANSWER_BOUND_MS);
  // The answer names a run that exists: the caller can find out what happened.
  const dagRunId = String(object?.details?.dagRunId);
  const run = await restJson(stack.baseUrl, `/dag-runs/orphan-wait/${dagRunId}`);
  expect(run.dagRunId).toBe(dagRunId);
  report({
    fault: 'kill -9 of the gateway serving an SSE tools/call; client resumes on another replica',
    guarantee: 'answered resource_unavailable, outcome unknown, requestId + dagRunId (dagu-model §10)',
    test: 'test/faults/orphaned-request.fault.test.ts',
    recoveryMs: at - killedAt,
    boundMs: ANSWER_BOUND_MS,
    calls: '1 call',
  });
});
