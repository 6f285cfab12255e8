/**
 * Server→client traffic across replicas, against real Redis (Streamable HTTP
 * §Sending Messages, §Listening, §Resumability; MCP cancellation; dagu-model
 * §8 subscriptions, §10 progress): a request cancelled on another replica,
 * a client's answer reaching the replica that waits for it, notifications
 * reaching the GET stream wherever it is held, resumption by Last-Event-ID.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolHandler } from '../mcp-types';
import {
  deleteKeysWithPrefix,
  initialize,
  openSse,
  send,
  startReplica,
  TEST_REDIS_URL,
  type SseBlock,
  type TestReplica,
} from './mcp-harness.test-support';

const prefix = `it-mcpx-${randomBytes(4).toString('hex')}`;
let a: TestReplica;
let b: TestReplica;
let cancelled = 0;

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const tools: Record<string, ToolHandler> = {
  slow: async (args, ctx) => {
    const rounds =
      typeof args === 'object' && args !== null && 'ms' in args && typeof args.ms === 'number' ? args.ms / 50 : 20;
    for (let i = 0; i < rounds && !ctx.signal.aborted; i++) {
      await new Promise((r) => setTimeout(r, 50));
      if (ctx.progressToken !== undefined)
        await ctx.notify({
          method: 'notifications/progress',
          params: { progressToken: ctx.progressToken, progress: i },
        });
    }
    if (ctx.signal.aborted) cancelled += 1;
    return text('done');
  },
  ask: async (_args, ctx) => {
    const result = await ctx.sendRequest?.({
      method: 'sampling/createMessage',
      params: { messages: [], maxTokens: 5 },
    });
    return text(`client said ${JSON.stringify(result?.content)}`);
  },
  log: async (_args, ctx) => {
    for (const level of ['debug', 'info', 'error'] as const)
      await ctx.notify({ method: 'notifications/message', params: { level, data: level } });
    return text('logged');
  },
};

beforeAll(async () => {
  a = await startReplica({ prefix, tools, keepAliveMs: 200 });
  b = await startReplica({ prefix, tools, keepAliveMs: 200 });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

const call = (id: number, name: string, meta?: Record<string, unknown>, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta !== undefined ? { _meta: meta } : {}) },
});
const message = (blk: SseBlock | undefined): Record<string, unknown> => (blk?.data ? JSON.parse(blk.data) : {});
/** A string field of a block's `params` ('' when absent). */
const param = (blk: SseBlock, key: string): string => {
  const params: unknown = message(blk).params;
  const value: unknown =
    typeof params === 'object' && params !== null ? Object.fromEntries(Object.entries(params))[key] : undefined;
  return typeof value === 'string' ? value : '';
};

test('a tools/call with a progress token is answered as SSE: priming event, keep-alives, progress, result', async () => {
  const sid = await initialize(a.url);
  const stream = await openSse(b.url, {
    method: 'POST',
    headers: { 'mcp-session-id': sid },
    body: call(1, 'slow', { progressToken: 'p1' }),
  });
  expect(stream.headers['content-type']).toContain('text/event-stream');
  expect(stream.headers['x-accel-buffering']).toBe('no');
  const first = await stream.next(() => true);
  expect(first.comment).toBeDefined();
  const priming = await stream.next((blk) => blk.id !== undefined);
  expect(priming).toMatchObject({ data: '', retry: '200' });
  await stream.next((blk) => message(blk).method === 'notifications/progress');
  await stream.ended;
  expect(stream.blocks.filter((blk) => blk.comment === 'keep-alive').length).toBeGreaterThanOrEqual(3);
  const last = stream.blocks.at(-1);
  expect(message(last)).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
  expect(
    stream.blocks.filter((blk) => blk.data !== undefined && blk.data !== '').every((blk) => blk.id?.startsWith('r')),
  ).toBe(true);

  // Resuming from the priming id replays everything on the other replica; resuming after the response ends at once.
  const replay = await openSse(a.url, { headers: { 'mcp-session-id': sid, 'last-event-id': priming.id ?? '' } });
  await replay.ended;
  expect(message(replay.blocks.at(-1))).toMatchObject({ id: 1, result: {} });
  const done = await openSse(b.url, { headers: { 'mcp-session-id': sid, 'last-event-id': last?.id ?? '' } });
  await done.ended;
  expect(done.blocks.filter((blk) => blk.data)).toEqual([]);
  const gone = await send(b.url, {
    method: 'GET',
    headers: { 'mcp-session-id': sid, accept: 'text/event-stream', 'last-event-id': 'r0000000000000000_1-0' },
  });
  expect(gone.status).toBe(400);
});

test('notifications/cancelled sent to the other replica aborts the request: no response, the stream ends', async () => {
  const sid = await initialize(a.url);
  const before = cancelled;
  const stream = await openSse(a.url, {
    method: 'POST',
    headers: { 'mcp-session-id': sid },
    body: call(7, 'slow', { progressToken: 'p7' }, { ms: 10_000 }),
  });
  await stream.next((blk) => message(blk).method === 'notifications/progress');
  const note = await send(b.url, {
    headers: { 'mcp-session-id': sid },
    body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } },
  });
  expect(note.status).toBe(202);
  await stream.ended;
  expect(stream.blocks.some((blk) => message(blk).id === 7)).toBe(false);
  expect(cancelled).toBe(before + 1);
});

test('sampling: the client answers on the other replica and the waiting tool gets the result', async () => {
  const sid = await initialize(a.url, 'alice', '2025-11-25', { sampling: {} });
  const stream = await openSse(a.url, {
    method: 'POST',
    headers: { 'mcp-session-id': sid, accept: 'text/event-stream' },
    body: call(3, 'ask'),
  });
  const request = message(await stream.next((blk) => message(blk).method === 'sampling/createMessage'));
  const answer = {
    jsonrpc: '2.0',
    id: request.id,
    result: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' },
  };
  expect((await send(b.url, { headers: { 'mcp-session-id': sid }, body: answer })).status).toBe(202);
  const result = message(await stream.next((blk) => message(blk).id === 3));
  expect(JSON.stringify(result)).toContain('client said');
  expect(JSON.stringify(result)).toContain('hi');
});

test('sampling without the client capability fails the tool call instead of asking', async () => {
  const sid = await initialize(a.url);
  const answer = await send(b.url, {
    headers: { 'mcp-session-id': sid, accept: 'application/json' },
    body: call(4, 'ask'),
  });
  expect(answer.json).toMatchObject({ id: 4, error: { code: -32601 } });
});

test('messages of a JSON-answered call reach the GET stream on the other replica, filtered by logging/setLevel', async () => {
  const sid = await initialize(a.url);
  const stream = await openSse(b.url, { headers: { 'mcp-session-id': sid } });
  await stream.next((blk) => blk.comment !== undefined);
  await send(a.url, {
    headers: { 'mcp-session-id': sid },
    body: { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info' } },
  });
  await send(a.url, { headers: { 'mcp-session-id': sid, accept: 'application/json' }, body: call(2, 'log') });
  await stream.next(
    (blk) => message(blk).method === 'notifications/message' && JSON.stringify(message(blk)).includes('error'),
  );
  const levels = stream.blocks.filter((blk) => blk.data).map((blk) => param(blk, 'level'));
  expect(levels).toEqual(['info', 'error']);
  stream.close();
});

test('a replica that has the session record memoized (SESSION_CACHE_MS) follows a logging/setLevel made on another replica', async () => {
  const sid = await initialize(a.url);
  const stream = await openSse(a.url, { headers: { 'mcp-session-id': sid } });
  await stream.next((blk) => blk.comment !== undefined);
  expect(
    (await send(b.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 1, method: 'ping' } })).status,
  ).toBe(200);
  await send(a.url, {
    headers: { 'mcp-session-id': sid },
    body: { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'error' } },
  });
  await send(b.url, { headers: { 'mcp-session-id': sid, accept: 'application/json' }, body: call(3, 'log') });
  await stream.next((blk) => message(blk).method === 'notifications/message');
  await send(b.url, { headers: { 'mcp-session-id': sid }, body: { jsonrpc: '2.0', id: 4, method: 'ping' } });
  expect(stream.blocks.filter((blk) => blk.data).map((blk) => param(blk, 'level'))).toEqual(['error']);
  stream.close();
});

test('resourceUpdated reaches a subscribed session on whichever replica holds its stream; GET resumes by Last-Event-ID', async () => {
  const sid = await initialize(a.url);
  const uri = `dagu://runs/nightly/${randomBytes(4).toString('hex')}`;
  await send(a.url, {
    headers: { 'mcp-session-id': sid },
    body: { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri } },
  });
  const first = await openSse(b.url, { headers: { 'mcp-session-id': sid } });
  await first.next((blk) => blk.comment !== undefined);
  expect(await a.manager.resourceUpdated(uri)).toBe(1);
  const e1 = await first.next((blk) => message(blk).method === 'notifications/resources/updated');
  expect(message(e1)).toMatchObject({ params: { uri } });
  expect(e1.id).toMatch(/^s_\d+-\d+$/);
  first.close();
  await first.ended;

  // Two more while no stream is open; the client resumes on the other replica after e1.
  await a.manager.notifySession(sid, { method: 'notifications/resources/updated', params: { uri: `${uri}/2` } });
  await a.manager.notifySession(sid, { method: 'notifications/resources/updated', params: { uri: `${uri}/3` } });
  const resumed = await openSse(a.url, { headers: { 'mcp-session-id': sid, 'last-event-id': e1.id ?? '' } });
  await resumed.next((blk) => JSON.stringify(message(blk)).includes(`${uri}/3`));
  const uris = resumed.blocks.filter((blk) => blk.data).map((blk) => param(blk, 'uri'));
  expect(uris).toEqual([`${uri}/2`, `${uri}/3`]);

  // With two GET streams open, each new message goes to exactly one of them.
  const second = await openSse(b.url, { headers: { 'mcp-session-id': sid } });
  await second.next((blk) => blk.comment !== undefined);
  for (let i = 4; i < 10; i++)
    await a.manager.notifySession(sid, { method: 'notifications/resources/updated', params: { uri: `${uri}/${i}` } });
  await new Promise((r) => setTimeout(r, 400));
  const seen = [...resumed.blocks, ...second.blocks].filter((blk) => blk.data).map((blk) => param(blk, 'uri'));
  expect(seen.filter((u) => /\/[4-9]$/.test(u)).sort()).toEqual([4, 5, 6, 7, 8, 9].map((i) => `${uri}/${i}`));
  resumed.close();
  second.close();
});

test('a DELETE on one replica is answered only once the other replica has dropped its memoized record: the next request there is 404', async () => {
  // Twenty rounds: without the wait for the end message's echo, B sometimes still served the
  // session from its cache right after the DELETE (the conformance suite caught it once in five).
  for (let round = 0; round < 20; round++) {
    const sid = await initialize(a.url);
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect((await send(b.url, { headers: { 'mcp-session-id': sid }, body: ping })).status).toBe(200);
    expect((await send(a.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(200);
    expect((await send(b.url, { headers: { 'mcp-session-id': sid }, body: ping })).status).toBe(404);
  }
});
