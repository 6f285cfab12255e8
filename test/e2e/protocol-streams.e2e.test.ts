/**
 * SSE streams and the MCP surface end to end, with two gateway replicas
 * behind a round-robin proxy (spec 020 §Endpoint: an SSE comment right after
 * the headers and at most every 30 s — here SSE_KEEPALIVE_MS=500; MCP
 * basic/transports §Listening, §Resumability; dagu-model §8 prompts,
 * completions, subscriptions, logging; §10 progress during waits).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { initialize, messageOf, openSse, post } from './mcp-http';
import { connectClient, startStack, type Stack } from './stack';

let stack: Stack;
let url: string;

beforeAll(async () => {
  stack = await startStack(
    { SSE_KEEPALIVE_MS: '500', SSE_RETRY_MS: '500' },
    { gatewayReplicas: 2, conformanceFixture: true },
  );
  url = stack.mcpUrl;
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const rpc = (id: number, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});

describe('GET stream (spec 020 §Endpoint; Streamable HTTP §Listening)', () => {
  test('a comment right after the headers, then keep-alive comments at the configured interval; proxy-safe headers', async () => {
    const { sid } = await initialize(url);
    const stream = await openSse(url, { headers: { 'mcp-session-id': sid } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.headers.get('cache-control')).toContain('no-cache');
    const first = await stream.next(() => true);
    expect(first.comment).toBeDefined();
    expect(first.at).toBeLessThan(400);
    await stream.next((b) => b.comment !== undefined && b !== first, 2_000);
    await new Promise((r) => setTimeout(r, 1_300));
    const all = stream.blocks.filter((b) => b.comment !== undefined);
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < all.length; i++) expect((all[i]?.at ?? 0) - (all[i - 1]?.at ?? 0)).toBeLessThan(1_500);
    stream.close();
  });

  test('messages of a JSON-answered call reach the GET stream with event ids, whichever replica holds it', async () => {
    const { sid } = await initialize(url);
    const stream = await openSse(url, { headers: { 'mcp-session-id': sid } });
    await stream.next((b) => b.comment !== undefined);
    await post(url, rpc(1, 'tools/call', { name: 'test_tool_with_logging', arguments: {} }), {
      'mcp-session-id': sid,
      accept: 'application/json',
    });
    await stream.next((b) => JSON.stringify(messageOf(b)).includes('Tool execution completed'));
    const events = stream.blocks.filter((b) => b.data);
    expect(events).toHaveLength(3);
    for (const event of events) expect(event.id).toMatch(/^s_\d+-\d+$/);
    stream.close();
  });

  test('a long tool call answered over SSE gets keep-alive comments, progress, then the result', async () => {
    const { sid } = await initialize(url);
    const stream = await openSse(url, {
      method: 'POST',
      headers: { 'mcp-session-id': sid },
      body: rpc(5, 'tools/call', { name: 'test_sleep', arguments: { ms: 1_600 }, _meta: { progressToken: 'sleep-1' } }),
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    await stream.ended;
    expect(stream.blocks.filter((b) => b.comment === 'keep-alive').length).toBeGreaterThanOrEqual(2);
    expect(stream.blocks.filter((b) => messageOf(b).method === 'notifications/progress').length).toBeGreaterThanOrEqual(
      5,
    );
    expect(messageOf(stream.blocks.at(-1) ?? { at: 0 })).toMatchObject({
      id: 5,
      result: { content: [{ text: 'slept 1600 ms' }] },
    });
  });
});

describe('server→client requests and stream resumption through the round-robin proxy', () => {
  test('sampling and elicitation: the SDK client answers on whatever replica its POST reaches', async () => {
    const client = new Client(
      { name: 'e2e-sampling', version: '1' },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'forty-two' },
      model: 'm',
    }));
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { username: 'ada', email: 'ada@example.com' },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    for (let i = 0; i < 3; i++) {
      const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'answer?' } });
      expect(JSON.stringify(sampled.content)).toContain('LLM response: forty-two');
      const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'who?' } });
      expect(JSON.stringify(elicited.content)).toContain('ada@example.com');
    }
    await client.close();
  });

  test('SEP-1699: the server closes a POST stream mid-call; the SDK client resumes with Last-Event-ID and gets the result', async () => {
    const client = await connectClient(url);
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
    expect(JSON.stringify(result.content)).toContain('Reconnection test completed');
    await client.close();
  });

  test('cancellation sent through the proxy stops a call running on whichever replica (no response on its stream)', async () => {
    const { sid } = await initialize(url);
    const stream = await openSse(url, {
      method: 'POST',
      headers: { 'mcp-session-id': sid },
      body: rpc(9, 'tools/call', { name: 'test_sleep', arguments: { ms: 30_000 }, _meta: { progressToken: 'c' } }),
    });
    await stream.next((b) => messageOf(b).method === 'notifications/progress');
    for (let i = 0; i < 2; i++) {
      expect(
        (
          await post(
            url,
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } },
            { 'mcp-session-id': sid },
          )
        ).status,
      ).toBe(202);
    }
    await stream.ended;
    expect(stream.blocks.some((b) => messageOf(b).id === 9)).toBe(false);
  });
});

describe('MCP surface (dagu-model §8)', () => {
  test('prompts/list and prompts/get with argument validation; completion of prompt arguments and template variables', async () => {
    const client = await connectClient(url);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        'dagu_create_dag',
        'dagu_edit_dag',
        'dagu_create_wiki_page',
        'dagu_edit_wiki_page',
        'dagu_debug_failed_run',
      ]),
    );
    const got = await client.getPrompt({
      name: 'dagu_edit_dag',
      arguments: { name: 'compl-nightly', change: 'run at 3am' },
    });
    expect(got.messages[0]).toMatchObject({
      role: 'user',
      content: { type: 'text', text: expect.stringContaining('compl-nightly') },
    });
    await expect(
      client.getPrompt({ name: 'dagu_edit_dag', arguments: { name: 'bad name', change: 'x' } }),
    ).rejects.toMatchObject({ code: -32602 });

    const applied = await client.callTool({
      name: 'dagu_change',
      arguments: { mode: 'apply', name: 'compl-nightly', spec: 'steps:\n  - name: a\n    run: echo a\n' },
    });
    expect(applied.isError).toBeFalsy();
    const byPrompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'dagu_edit_dag' },
      argument: { name: 'name', value: 'compl' },
    });
    expect(byPrompt.completion.values).toContain('compl-nightly');
    const byTemplate = await client.complete({
      ref: { type: 'ref/resource', uri: 'dagu://dags/{name}/spec' },
      argument: { name: 'name', value: 'compl-n' },
    });
    expect(byTemplate.completion.values).toEqual(['compl-nightly']);
    const topics = await client.complete({
      ref: { type: 'ref/resource', uri: 'dagu://reference/{topic}' },
      argument: { name: 'topic', value: 'ex' },
    });
    expect(topics.completion.values).toEqual(['execute-tool']);
    await client.close();
  });

  test('ping, logging/setLevel, subscribe/unsubscribe on run URIs (other dagu:// URIs refused with the 020 error object)', async () => {
    const client = await connectClient(url);
    await expect(client.ping()).resolves.toEqual({});
    await expect(client.setLoggingLevel('warning')).resolves.toEqual({});
    await expect(client.subscribeResource({ uri: 'dagu://runs/nightly/r-1' })).resolves.toEqual({});
    await expect(client.subscribeResource({ uri: 'dagu://runs/nightly/r-1/logs' })).resolves.toEqual({});
    await expect(client.unsubscribeResource({ uri: 'dagu://runs/nightly/r-1' })).resolves.toEqual({});
    await expect(client.subscribeResource({ uri: 'dagu://dags' })).rejects.toMatchObject({
      code: -32602,
      data: { code: 'invalid_resource_uri' },
    });
    await client.close();
  });

  test('dagu_execute with wait sends notifications/progress over SSE while the run goes on (dagu-model §10)', async () => {
    const client = await connectClient(url);
    const progress: Progress[] = [];
    const result = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'dagu_execute',
          arguments: {
            action: 'start',
            name: 'progress-e2e',
            spec: 'steps:\n  - name: nap\n    run: sleep 6\n',
            wait: true,
            waitTimeoutSeconds: 60,
          },
        },
      },
      CallToolResultSchema,
      { onprogress: (p) => progress.push(p), timeout: 60_000 },
    );
    expect(result.structuredContent).toMatchObject({ run: { statusLabel: 'succeeded' } });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    await client.close();
  }, 60_000);
});
