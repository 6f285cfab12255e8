/**
 * Both MCP eras on one endpoint (issue 22; mcp-revisions §2): the stateless
 * 2026-07-28 revision beside the session revisions, two gateway replicas
 * behind the round-robin proxy, the conformance fixture for test_* tools.
 * The modern era is driven by the SDK's v2 client (`@modelcontextprotocol/client`,
 * pinned to 2026-07-28) and by raw HTTP where the wire itself is the point;
 * the legacy era by the v1 SDK client, on the same URL.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { Redis } from 'ioredis';
import { connectClient, startStack, type Stack } from './stack';
import { messageOf, openSse, post } from './mcp-http';

let stack: Stack;
let url: string;

beforeAll(async () => {
  stack = await startStack({ SSE_KEEPALIVE_MS: '500' }, { gatewayReplicas: 2, conformanceFixture: true });
  url = stack.mcpUrl;
}, 150_000);

afterAll(async () => {
  await stack?.stop();
});

const MODERN = '2026-07-28';
const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'e2e-raw-modern', version: '1' },
  ...extra,
});
const rpc = (id: number | string, method: string, params: Record<string, unknown> = {}, meta = envelope()) => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { ...params, _meta: meta },
});
/** The headers a 2026-07-28 client must send with `method` (and `name` for tools/call, resources/read, prompts/get). */
const headers = (method: string, name?: string): Record<string, string> => ({
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
  ...(name !== undefined ? { 'mcp-name': name } : {}),
});

async function modernClient(capabilities: Record<string, unknown> = {}): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'e2e-modern', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(new ModernTransport(new URL(url)));
  return client;
}

describe('the stateless path (2026-07-28) with the SDK v2 client through the proxy', () => {
  test('tools, resources, prompts and completion work without a session, on both replicas', async () => {
    const client = await modernClient();
    const from = stack.proxy?.routed.length ?? 0;
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).slice(0, 3)).toEqual(['dagu_read', 'dagu_change', 'dagu_execute']);
    // Deterministic order: the same list twice.
    expect((await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)).toEqual(
      tools.map((t) => t.name),
    );
    const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'reference' } });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toBeDefined();
    const simple = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(simple.content).toEqual([{ type: 'text', text: expect.any(String) }]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('test://static-text');
    const text = await client.readResource({ uri: 'test://static-text' });
    expect(text.contents[0]).toMatchObject({ text: 'This is the content of the static text resource.' });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('dagu_create_dag');
    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
    expect(prompt.messages.length).toBeGreaterThan(0);
    const topics = await client.complete({
      ref: { type: 'ref/resource', uri: 'dagu://reference/{topic}' },
      argument: { name: 'topic', value: 'ex' },
    });
    expect(topics.completion.values).toEqual(['execute-tool']);
    const ports = new Set(stack.proxy?.routed.slice(from).map((r) => r.split(' ')[1]));
    expect(ports.size).toBe(2);
    await client.close();
  });

  test('subscriptions/listen: acknowledged filter, then run updates tagged with the subscription id (any replica)', async () => {
    const client = await modernClient();
    const updated: { uri: string; meta: unknown }[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updated.push({ uri: n.params.uri, meta: n.params._meta });
    });
    const started = await client.callTool({
      name: 'dagu_execute',
      arguments: { action: 'start', name: 'listen-e2e', spec: 'steps:\n  - name: nap\n    run: sleep 3\n' },
    });
    expect(started.isError).toBeFalsy();
    const dagRunId = String((started.structuredContent as { dagRunId: string }).dagRunId);
    const uri = `dagu://runs/listen-e2e/${dagRunId}`;
    const subscription = await client.listen({ resourceSubscriptions: [uri, 'dagu://dags'], toolsListChanged: true });
    // Run URIs and (on /mcp, whose extension tools can change) tool-list changes; other URIs are dropped.
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [uri], toolsListChanged: true });
    for (let waited = 0; updated.length === 0 && waited < 30_000; waited += 200)
      await new Promise((r) => setTimeout(r, 200));
    expect(updated[0]).toEqual({ uri, meta: { 'io.modelcontextprotocol/subscriptionId': expect.anything() } });
    await subscription.close();
    await client.close();
  }, 60_000);

  test('the legacy era keeps working on the same URL (v1 SDK client, session)', async () => {
    const client = await connectClient(url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('dagu_read');
    await expect(client.ping()).resolves.toEqual({});
    await client.close();
  });
});

describe('the stateless wire (raw HTTP)', () => {
  test('server/discover: supported versions, capabilities, instructions, serverInfo, cache hints, resultType', async () => {
    const answer = await post(url, rpc(1, 'server/discover'), headers('server/discover'));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.json).toMatchObject({
      id: 1,
      result: {
        resultType: 'complete',
        supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
        capabilities: { tools: {}, resources: {}, prompts: {} },
        instructions: expect.stringContaining('dagu_read'),
        ttlMs: expect.any(Number),
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'dagu-mcp' } },
      },
    });
  });

  test('every result has resultType; list and read results carry ttlMs and cacheScope', async () => {
    const list = await post(url, rpc(2, 'tools/list'), headers('tools/list'));
    expect(list.json).toMatchObject({ result: { resultType: 'complete', ttlMs: 60_000, cacheScope: 'private' } });
    const read = await post(url, rpc(3, 'resources/read', { uri: 'test://static-text' }), {
      ...headers('resources/read', 'test://static-text'),
    });
    expect(read.json).toMatchObject({ result: { resultType: 'complete', ttlMs: 0, cacheScope: 'private' } });
    // JSON only: an extension tool is otherwise answered as SSE (it may log or ask the client).
    const call = await post(url, rpc(4, 'tools/call', { name: 'test_simple_text', arguments: {} }), {
      ...headers('tools/call', 'test_simple_text'),
      accept: 'application/json',
    });
    expect(call.json).toMatchObject({ result: { resultType: 'complete', content: [{ type: 'text' }] } });
    expect(call.json).not.toHaveProperty('result.ttlMs');
  });

  test('header rules: -32020 with HTTP 400 when MCP-Protocol-Version, Mcp-Method or Mcp-Name disagree or are missing', async () => {
    const body = rpc(5, 'tools/call', { name: 'test_simple_text', arguments: {} });
    const cases: Record<string, string>[] = [
      { 'mcp-protocol-version': MODERN, 'mcp-name': 'test_simple_text' },
      { ...headers('tools/list'), 'mcp-name': 'test_simple_text' },
      headers('tools/call'),
      headers('tools/call', 'test_error_handling'),
      { ...headers('tools/call', 'test_simple_text'), 'mcp-protocol-version': '2025-11-25' },
    ];
    for (const h of cases) {
      const answer = await post(url, body, h);
      expect([answer.status, answer.json]).toEqual([
        400,
        expect.objectContaining({ id: 5, error: expect.objectContaining({ code: -32020 }) }),
      ]);
    }
    // Non-ASCII header values travel base64-encoded; an encoded name that matches is accepted.
    const encoded = `=?base64?${Buffer.from('test_simple_text').toString('base64')}?=`;
    const ok = await post(url, body, { ...headers('tools/call'), 'mcp-name': encoded });
    expect(ok.status).toBe(200);
  });

  test('x-mcp-header (SEP-2243): the DAG name is declared as Mcp-Param-Name and checked against the body', async () => {
    const client = await modernClient();
    const { tools } = await client.listTools();
    for (const tool of ['dagu_read', 'dagu_change', 'dagu_execute'])
      expect(tools.find((t) => t.name === tool)?.inputSchema.properties?.name).toMatchObject({
        'x-mcp-header': 'Name',
      });
    // The SDK v2 client mirrors the annotated argument itself (Base64 for a non-ASCII value): accepted.
    const mirrored = await client.callTool({ name: 'dagu_read', arguments: { target: 'reference', name: 'tools' } });
    expect(mirrored.isError).toBeFalsy();
    const unicode = await client.callTool({ name: 'dagu_read', arguments: { target: 'dag', name: 'dåg' } });
    expect(unicode.structuredContent).toMatchObject({ code: 'invalid_tool_input' });
    await client.close();

    const body = (name?: string) =>
      rpc(9, 'tools/call', {
        name: 'dagu_read',
        arguments: { target: 'reference', ...(name !== undefined ? { name } : {}) },
      });
    const base = headers('tools/call', 'dagu_read');
    const b64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
    const refused: [Record<string, unknown>, Record<string, string>][] = [
      [body('tools'), base], // the value is in the body, the header missing
      [body('tools'), { ...base, 'mcp-param-name': 'authoring' }], // disagrees
      [body(), { ...base, 'mcp-param-name': 'tools' }], // a header for an absent value
      [body('Hello'), { ...base, 'mcp-param-name': '=?base64?SGVsbG8?=' }], // Base64 without its padding
      [body('Hello'), { ...base, 'mcp-param-name': '=?base64?SGVs!!!bG8=?=' }], // not Base64
    ];
    for (const [request, h] of refused) {
      const answer = await post(url, request, h);
      expect([answer.status, answer.json]).toEqual([
        400,
        expect.objectContaining({ id: 9, error: expect.objectContaining({ code: -32020 }) }),
      ]);
    }
    const accepted: [Record<string, unknown>, Record<string, string>][] = [
      [body('tools'), { ...base, 'mcp-param-name': '  tools ' }],
      [body('tools'), { ...base, 'MCP-PARAM-NAME': b64('tools') }],
      // Without both ends of the wrapper a value is literal text.
      [body('dG9vbHM='), { ...base, 'mcp-param-name': 'dG9vbHM=' }],
      [body('=?base64?dG9vbHM='), { ...base, 'mcp-param-name': '=?base64?dG9vbHM=' }],
      [body(), base],
    ];
    for (const [request, h] of accepted) expect((await post(url, request, h)).status).toBe(200);
  });

  test('server card and server.json: public, valid against their schemas, the live capabilities and versions', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const schemas = join(__dirname, '..', 'fixtures', 'schemas');
    const load = (file: string) => JSON.parse(readFileSync(join(schemas, file), 'utf8')) as Record<string, unknown>;
    ajv.addSchema(load('server.schema.json'));
    const validCard = ajv.compile(load('server-card.schema.json'));
    const validServerJson = ajv.getSchema('https://dagu-mcp.local/test/fixtures/schemas/server.schema.json');
    const discover = await post(url, rpc(1, 'server/discover'), headers('server/discover'));
    const discovered = (discover.json as { result: { capabilities: unknown; supportedVersions: string[] } }).result;
    for (const path of ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json']) {
      const res = await fetch(`${stack.baseUrl}${path}`); // no credential: discovery comes before sign-in
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const card = (await res.json()) as Record<string, unknown>;
      expect(validCard(card) ? [] : validCard.errors).toEqual([]);
      expect(card).toMatchObject({
        name: 'local.dagu-mcp/gateway',
        remotes: [{ type: 'streamable-http', url: `${stack.baseUrl}/mcp` }],
        capabilities: discovered.capabilities,
      });
      const [remote] = card.remotes as { supportedProtocolVersions: string[] }[];
      expect([...(remote?.supportedProtocolVersions ?? [])].sort()).toEqual([...discovered.supportedVersions].sort());
    }
    const serverJson = (await (await fetch(`${stack.baseUrl}/.well-known/mcp/server.json`)).json()) as object;
    expect(validServerJson?.(serverJson) ? [] : validServerJson?.errors).toEqual([]);
    expect(serverJson).toMatchObject({ remotes: [{ type: 'streamable-http', url: `${stack.baseUrl}/mcp` }] });
    // A card that breaks the schema is refused by it (the check can fail).
    expect(validCard({ name: 'no namespace', version: '1', remotes: [] })).toBe(false);
  });

  test('-32022 with data.supported for an unsupported version; unknown or removed methods -32601 with HTTP 404', async () => {
    const future = await post(
      url,
      rpc(6, 'tools/list', {}, envelope({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' })),
      { ...headers('tools/list'), 'mcp-protocol-version': '2099-01-01' },
    );
    expect(future.status).toBe(400);
    expect(future.json).toMatchObject({
      id: 6,
      error: { code: -32022, data: { supported: expect.arrayContaining([MODERN]), requested: '2099-01-01' } },
    });
    for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'no/such']) {
      const answer = await post(url, rpc(7, method), headers(method));
      expect([answer.status, answer.json]).toEqual([
        404,
        expect.objectContaining({ error: expect.objectContaining({ code: -32601 }) }),
      ]);
    }
  });

  test('resource not found is -32602 in this revision (-32002 in the session revisions)', async () => {
    const uri = 'dagu://runs/no-such-dag/no-such-run';
    const answer = await post(url, rpc(8, 'resources/read', { uri }), headers('resources/read', uri));
    expect(answer.json).toMatchObject({ error: { code: -32602, data: { code: 'resource_not_found' } } });
  });

  test('POST only: GET and DELETE in the modern era are 405; a batch is 400', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, {
        method,
        headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN },
      });
      expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
    }
    const batch = await post(url, [rpc(9, 'tools/list')], headers('tools/list'));
    expect(batch.status).toBe(400);
  });

  test('per-request log level: messages below _meta logLevel are dropped, and none without a level (SEP-2575)', async () => {
    const call = (level: string | undefined) =>
      openSse(url, {
        method: 'POST',
        headers: { ...headers('tools/call', 'test_tool_with_logging'), accept: 'text/event-stream' },
        body: rpc(
          10,
          'tools/call',
          { name: 'test_tool_with_logging', arguments: {} },
          envelope(level === undefined ? {} : { 'io.modelcontextprotocol/logLevel': level }),
        ),
      });
    const all = await call('debug');
    await all.ended;
    expect(all.blocks.filter((b) => messageOf(b).method === 'notifications/message').length).toBe(3);
    expect(all.blocks.find((b) => messageOf(b).id === 10)).toBeDefined();
    const unset = await call(undefined);
    await unset.ended;
    expect(unset.blocks.filter((b) => messageOf(b).method === 'notifications/message').length).toBe(0);
    expect(unset.blocks.find((b) => messageOf(b).id === 10)).toBeDefined();
    const quiet = await call('error');
    await quiet.ended;
    expect(quiet.blocks.filter((b) => messageOf(b).method === 'notifications/message').length).toBe(0);
    expect(quiet.blocks.find((b) => messageOf(b).id === 10)).toBeDefined();
  });

  test('closing the request stream cancels the request (the tool sees its signal aborted)', async () => {
    const mark = `m${Date.now()}`;
    const stream = await openSse(url, {
      method: 'POST',
      headers: { ...headers('tools/call', 'test_sleep'), accept: 'text/event-stream' },
      body: rpc(
        11,
        'tools/call',
        { name: 'test_sleep', arguments: { ms: 30_000, mark } },
        envelope({ progressToken: 'p' }),
      ),
    });
    await stream.next((b) => messageOf(b).method === 'notifications/progress');
    stream.close();
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      let seen: string | null = null;
      for (let waited = 0; seen === null && waited < 10_000; waited += 100) {
        seen = await redis.get(`e2e-${stack.id}:conformance:mark:cancelled:${mark}`);
        if (seen === null) await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toBe('1');
    } finally {
      redis.disconnect();
    }
  });
});

describe('2025-03-26 clients (no structuredContent)', () => {
  test('get the structured result as JSON in a text item too; later revisions keep the exact texts', async () => {
    const call = async (version: string) => {
      const init = await post(url, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      });
      const sid = init.headers.get('mcp-session-id') ?? '';
      const answer = await post(
        url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'dagu_read', arguments: { target: 'reference' } },
        },
        { 'mcp-session-id': sid, 'mcp-protocol-version': version },
      );
      return (answer.json as { result: { content: { type: string; text?: string }[]; structuredContent: unknown } })
        .result;
    };
    const old = await call('2025-03-26');
    expect(old.content.map((c) => c.text)).toContain(JSON.stringify(old.structuredContent));
    const current = await call('2025-11-25');
    expect(current.content.map((c) => c.text)).not.toContain(JSON.stringify(current.structuredContent));
    expect(current.content.length).toBe(old.content.length - 1);
  });
});
