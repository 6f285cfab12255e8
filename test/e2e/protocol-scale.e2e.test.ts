/**
 * Horizontal scale end to end (issue "sessions in Redis"; docs/architecture.md
 * "Sessions and scale"): two gateway replicas behind a plain round-robin
 * proxy. Killing one replica loses no session — the next request succeeds on
 * the other, and a client reconnecting its GET stream there resumes after its
 * last event id. Idle sessions expire on every replica.
 */
import { initialize, messageOf, openSse, post } from './mcp-http';
import { connectClient, startStack, type Stack } from './stack';

const rpc = (id: number, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});
const logCall = (id: number) => rpc(id, 'tools/call', { name: 'test_tool_with_logging', arguments: {} });
/** The `params.data` of each message block (the fixture's log lines). */
const texts = (blocks: ReadonlyArray<{ data?: string }>): string[] =>
  blocks
    .filter((b) => b.data)
    .map((b) => {
      const params: unknown = messageOf({ ...b, at: 0 }).params;
      return typeof params === 'object' && params !== null
        ? String(Object.fromEntries(Object.entries(params)).data)
        : '';
    });

describe('a killed replica loses no session', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ SSE_KEEPALIVE_MS: '500' }, { gatewayReplicas: 2, conformanceFixture: true });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('the SDK client goes on through the proxy after one replica is killed (SIGKILL)', async () => {
    const client = await connectClient(stack.mcpUrl);
    expect((await client.listTools()).tools.length).toBeGreaterThan(3);
    await stack.gateways[0]?.kill();
    for (let i = 0; i < 4; i++) {
      const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'reference', name: 'tools' } });
      expect(read.isError).toBeFalsy();
    }
    expect((await client.listPrompts()).prompts.length).toBeGreaterThanOrEqual(5);
    await client.close();
  });
});

describe('GET stream resumption on another replica', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ SSE_KEEPALIVE_MS: '500' }, { gatewayReplicas: 2, conformanceFixture: true });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('the stream held by a killed replica resumes after its last event id on the survivor, nothing lost or repeated', async () => {
    const [doomed, survivor] = stack.gateways;
    if (doomed === undefined || survivor === undefined) throw new Error('two gateways expected');
    const { sid } = await initialize(stack.mcpUrl);
    const stream = await openSse(`${doomed.url}/mcp`, { headers: { 'mcp-session-id': sid } });
    await stream.next((b) => b.comment !== undefined);
    await post(`${survivor.url}/mcp`, logCall(1), { 'mcp-session-id': sid, accept: 'application/json' });
    await stream.next((b) => texts([b]).includes('Tool execution completed'));
    const events = stream.blocks.filter((b) => b.data);
    expect(texts(events)).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
    const seen = events[1]?.id ?? '';

    await doomed.kill();
    await stream.ended;
    await post(stack.mcpUrl, logCall(2), { 'mcp-session-id': sid, accept: 'application/json' }); // while no stream is open

    const resumed = await openSse(stack.mcpUrl, { headers: { 'mcp-session-id': sid, 'last-event-id': seen } });
    expect(resumed.status).toBe(200);
    await resumed.next((b) => b.data !== undefined && resumed.blocks.filter((x) => x.data).length >= 4);
    expect(texts(resumed.blocks)).toEqual([
      'Tool execution completed',
      'Tool execution started',
      'Tool processing data',
      'Tool execution completed',
    ]);
    await post(stack.mcpUrl, rpc(3, 'tools/call', { name: 'test_simple_text', arguments: {} }), {
      'mcp-session-id': sid,
    });
    await post(stack.mcpUrl, logCall(4), { 'mcp-session-id': sid, accept: 'application/json' });
    await resumed.next((b) => texts(resumed.blocks).length >= 7 && b.data !== undefined);
    expect(texts(resumed.blocks)).toHaveLength(7);
    resumed.close();
  });
});

describe('idle expiry on every replica (SESSION_IDLE_TTL_MS)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ SESSION_IDLE_TTL_MS: '3000' }, { gatewayReplicas: 2 });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('a session used within its TTL lives on; idle past it, it is 404 everywhere', async () => {
    const { sid } = await initialize(stack.mcpUrl);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await post(stack.mcpUrl, rpc(i, 'ping'), { 'mcp-session-id': sid })).status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 4_500));
    for (const gateway of stack.gateways)
      expect((await post(`${gateway.url}/mcp`, rpc(9, 'ping'), { 'mcp-session-id': sid })).status).toBe(404);
  });
});
