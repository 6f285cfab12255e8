/**
 * MCP transport rules end to end: two gateway replicas behind a plain
 * round-robin proxy (no session affinity), the conformance fixture for
 * test_* tools, raw HTTP to see the wire. Each test names the rule it proves
 * (MCP basic/transports "Streamable HTTP", revisions 2025-03-26, 2025-06-18,
 * 2025-11-25; spec 020 §Endpoint; dagu-model §8, §10).
 */
import { request } from 'node:http';
import { initialize, messageOf, openSse, post } from './mcp-http';
import { startStack, type Stack } from './stack';

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

const rpc = (id: number | string, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});
const call = (id: number, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) =>
  rpc(id, 'tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) });

describe('POST (Streamable HTTP §Sending Messages to the Server)', () => {
  test('initialize mints a visible-ASCII session id and negotiates the revision; later requests work on either replica', async () => {
    const { sid, answer } = await initialize(url, '2025-06-18');
    expect(sid).toMatch(/^[\x21-\x7e]{32,}$/);
    expect(answer.json).toMatchObject({
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, completions: {}, logging: {} },
        serverInfo: { name: 'dagu-mcp' },
        instructions: expect.stringContaining('dagu_read'),
      },
    });
    expect((await initialize(url, '2024-11-05')).answer.json).toMatchObject({
      result: { protocolVersion: '2025-11-25' },
    });
    const from = stack.proxy?.routed.length ?? 0;
    for (let i = 0; i < 6; i++)
      expect((await post(url, rpc(i, 'tools/list'), { 'mcp-session-id': sid })).status).toBe(200);
    const ports = new Set(stack.proxy?.routed.slice(from).map((r) => r.split(' ')[1]));
    expect(ports.size).toBe(2);
  });

  test('notifications and responses are answered 202 with no body', async () => {
    const { sid } = await initialize(url);
    const note = await post(
      url,
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { 'mcp-session-id': sid },
    );
    expect([note.status, note.text]).toEqual([202, '']);
    const response = await post(url, { jsonrpc: '2.0', id: 's-000000000000-1', result: {} }, { 'mcp-session-id': sid });
    expect([response.status, response.text]).toEqual([202, '']);
  });

  test('batch arrays: 400 -32600 for 2025-06-18 and 2025-11-25, a JSON array of answers for 2025-03-26; never with initialize', async () => {
    const { sid } = await initialize(url, '2025-03-26');
    const batch = [
      rpc(1, 'ping'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      rpc(2, 'tools/list'),
      { bogus: true },
    ];
    for (const version of ['2025-06-18', '2025-11-25']) {
      const refused = await post(url, batch, { 'mcp-session-id': sid, 'mcp-protocol-version': version });
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ error: { code: -32600 } });
    }
    const answered = await post(url, batch, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' });
    expect(answered.status).toBe(200);
    expect(answered.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      expect.objectContaining({ id: 2, result: expect.objectContaining({ tools: expect.any(Array) }) }),
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }),
    ]);
    const withInit = await post(url, [
      rpc(0, 'initialize', {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      }),
    ]);
    expect(withInit.status).toBe(400);
  });

  test('Accept: 406 as JSON when a POST accepts neither JSON nor SSE, or a GET does not accept SSE', async () => {
    const { sid } = await initialize(url);
    const postRefused = await post(url, rpc(5, 'ping'), { 'mcp-session-id': sid, accept: 'text/html' });
    expect(postRefused.status).toBe(406);
    expect(postRefused.json).toMatchObject({ id: 5, error: { code: -32000 } });
    const get = await fetch(url, { headers: { accept: 'application/json', 'mcp-session-id': sid } });
    expect(get.status).toBe(406);
    expect(await get.json()).toMatchObject({ error: { code: -32000 } });
  });

  test('Content-Type other than application/json → 415; malformed JSON → 400 -32700; over 4 MiB → 413; all JSON', async () => {
    const wrongType = await post(url, 'hello', { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expect(wrongType.json).toMatchObject({ error: { code: -32000 } });
    const malformed = await post(url, '{"jsonrpc": "2.0",');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ id: null, error: { code: -32700 } });
    const huge = await post(url, rpc(1, 'ping', { pad: 'x'.repeat(4 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    expect(huge.json).toMatchObject({ error: { code: -32600 } });
  });

  test('invalid params -32602, unknown method -32601, internal failure -32603: each with the request id', async () => {
    const { sid } = await initialize(url);
    const h = { 'mcp-session-id': sid };
    expect(
      (await post(url, rpc(11, 'prompts/get', { name: 'dagu_edit_dag', arguments: { name: 'x' } }), h)).json,
    ).toMatchObject({
      id: 11,
      error: { code: -32602, data: { details: { field: 'change' } } },
    });
    expect((await post(url, rpc(12, 'resources/read', {}), h)).json).toMatchObject({ id: 12, error: { code: -32602 } });
    expect((await post(url, rpc('13', 'no/such-method'), h)).json).toMatchObject({ id: '13', error: { code: -32601 } });
    expect(
      (await post(url, call(14, 'test_malformed_result'), { ...h, accept: 'application/json' })).json,
    ).toMatchObject({ id: 14, error: { code: -32603 } });
    expect((await post(url, call(15, 'no_such_tool'), h)).json).toMatchObject({ id: 15, error: { code: -32602 } });
    expect((await post(url, { jsonrpc: '1.0', id: 16, method: 'ping' }, h)).json).toMatchObject({
      id: 16,
      error: { code: -32600 },
    });
  });

  test('a client accepting only SSE gets SSE even for ping; JSON-capable clients get the JSON fast path', async () => {
    const { sid } = await initialize(url);
    const json = await post(url, rpc(1, 'ping'), { 'mcp-session-id': sid });
    expect(json.headers.get('content-type')).toContain('application/json');
    const sse = await openSse(url, {
      method: 'POST',
      headers: { 'mcp-session-id': sid, accept: 'text/event-stream' },
      body: rpc(2, 'ping'),
    });
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    await sse.ended;
    expect(messageOf(sse.blocks.at(-1) ?? { at: 0 })).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });
});

describe('sessions (§Session Management)', () => {
  test('no Mcp-Session-Id → 400; unknown → 404; both with the request id', async () => {
    const none = await post(url, rpc(21, 'tools/list'));
    expect(none.status).toBe(400);
    expect(none.json).toMatchObject({ id: 21, error: { code: -32000 } });
    const unknown = await post(url, rpc(22, 'tools/list'), { 'mcp-session-id': 'f'.repeat(64) });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ id: 22, error: { code: -32001 } });
  });

  test('a second initialize on a live session is 400 -32600 and the session goes on; DELETE ends it on every replica', async () => {
    const { sid } = await initialize(url);
    const again = await post(
      url,
      rpc(1, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      }),
      { 'mcp-session-id': sid },
    );
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ id: 1, error: { code: -32600 } });
    expect((await post(url, rpc(2, 'ping'), { 'mcp-session-id': sid })).status).toBe(200);
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await post(url, rpc(3, 'ping'), { 'mcp-session-id': sid })).status).toBe(404);
    expect((await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } })).status).toBe(404);
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(404);
  });
});

describe('MCP-Protocol-Version (§Protocol Version Header)', () => {
  test('unsupported or malformed → 400 on POST, GET and DELETE; absent → treated as 2025-03-26', async () => {
    const { sid } = await initialize(url);
    for (const version of ['2024-11-05', 'not-a-date']) {
      const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': version };
      expect((await post(url, rpc(1, 'ping'), headers)).status).toBe(400);
      expect((await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } })).status).toBe(400);
      expect((await fetch(url, { method: 'DELETE', headers })).status).toBe(400);
    }
    expect((await post(url, rpc(2, 'ping'), { 'mcp-session-id': sid })).json).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: {},
    });
    expect((await post(url, [rpc(3, 'ping')], { 'mcp-session-id': sid })).status).toBe(200);
  });
});

describe('Origin and Host (§Security Warning, DNS rebinding)', () => {
  test('a foreign Origin → 403; the gateway own origin and no Origin pass; a foreign Host → 403', async () => {
    const body = rpc(0, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    expect((await post(url, body, { origin: 'https://evil.example.com' })).status).toBe(403);
    expect((await post(url, body, { origin: new URL(url).origin })).status).toBe(200);
    expect((await post(url, body)).status).toBe(200);
    const port = new URL(url).port;
    const rebinding = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { host: `evil.example.com:${port}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    expect(rebinding).toBe(403);
  });
});
