/**
 * Session lifecycle against real Redis with two replicas sharing sessions
 * (Streamable HTTP §Session Management; docs/architecture.md "Sessions and scale"):
 * binding to the principal, second initialize, DELETE, idle expiry, and the
 * issue's leak check — 1,000 create/delete cycles leave no timer, listener,
 * subscription or key behind.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { initialize, openSse, send, startReplica, TEST_REDIS_URL, type TestReplica } from './mcp-harness.test-support';

const prefix = `it-mcp-${randomBytes(4).toString('hex')}`;
let a: TestReplica;
let b: TestReplica;
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL);
  a = await startReplica({ prefix });
  b = await startReplica({ prefix });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const list = (url: string, sid: string, principal = 'alice') =>
  send(url, {
    headers: { 'mcp-session-id': sid, 'x-test-principal': principal },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
const sessionKey = (sid: string) => `${prefix}:mcp:{${sid}}:session`;
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('sessions live in Redis and are bound to their principal', () => {
  test('a session made on one replica serves requests on the other; another principal gets 404', async () => {
    const sid = await initialize(a.url, 'alice');
    expect(sid).toMatch(/^[0-9a-f]{64}$/);
    expect((await list(b.url, sid)).status).toBe(200);
    const stranger = await list(b.url, sid, 'mallory');
    expect(stranger.status).toBe(404);
    expect(stranger.json).toMatchObject({ id: 1, error: { code: -32001 } });
  });

  test('a second initialize on a live session is 400 -32600 and leaves the record and its TTL alone', async () => {
    const sid = await initialize(a.url);
    await redis.pexpire(sessionKey(sid), 30_000);
    const before = await redis.hgetall(sessionKey(sid));
    const again = await send(b.url, {
      headers: { 'mcp-session-id': sid },
      body: {
        jsonrpc: '2.0',
        id: 9,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      },
    });
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ id: 9, error: { code: -32600 } });
    expect(await redis.hgetall(sessionKey(sid))).toEqual(before);
    expect(await redis.pttl(sessionKey(sid))).toBeLessThanOrEqual(30_000);
  });

  test('DELETE on one replica ends the session everywhere: its GET stream on the other closes, its keys go', async () => {
    const sid = await initialize(a.url);
    await send(a.url, {
      headers: { 'mcp-session-id': sid },
      body: { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'dagu://runs/x/r1' } },
    });
    const stream = await openSse(b.url, { headers: { 'mcp-session-id': sid } });
    await stream.next((blk) => blk.comment !== undefined);
    expect((await send(a.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(200);
    await stream.ended;
    expect((await list(b.url, sid)).status).toBe(404);
    expect(await redis.keys(`${prefix}:mcp:{${sid}}*`)).toEqual([]);
    expect(await redis.sismember(`${prefix}:mcp:subscribers:dagu://runs/x/r1`, sid)).toBe(0);
  });
});

describe('idle expiry (SESSION_IDLE_TTL_MS)', () => {
  let c: TestReplica;
  let d: TestReplica;
  beforeAll(async () => {
    c = await startReplica({ prefix: `${prefix}-ttl`, idleTtlMs: 1_000 });
    d = await startReplica({ prefix: `${prefix}-ttl`, idleTtlMs: 1_000 });
  });
  afterAll(async () => {
    await c?.close();
    await d?.close();
  });

  test('an idle session expires on every replica and Redis frees its keys', async () => {
    const sid = await initialize(c.url);
    expect((await list(d.url, sid)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_600));
    expect((await list(c.url, sid)).status).toBe(404);
    expect((await list(d.url, sid)).status).toBe(404);
    expect(await redis.keys(`${prefix}-ttl:mcp:{${sid}}*`)).toEqual([]);
  });

  test('an open GET stream keeps its session alive; once the session is gone the stream is closed and freed', async () => {
    const sid = await initialize(c.url);
    const stream = await openSse(d.url, { headers: { 'mcp-session-id': sid } });
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await list(c.url, sid)).status).toBe(200);
    await redis.del(`${prefix}-ttl:mcp:{${sid}}:session`); // as if it had expired
    await stream.ended;
    expect(d.manager.stats()).toMatchObject({ inflight: 0, sessionsWithStreams: 0, wakeChannels: 0 });
  });
});

test('1,000 create/delete cycles across two replicas leak no timer, listener, subscription or key', async () => {
  const timersBefore = timers();
  const channelsBefore = (await redis.pubsub('CHANNELS', `${prefix}:*`)).length;
  const keysBefore = await redis.keys(`${prefix}:*`);
  for (let i = 0; i < 1000; i++) {
    const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
    const sid = await initialize(first.url);
    expect((await list(second.url, sid)).status).toBe(200);
    let stream: Awaited<ReturnType<typeof openSse>> | undefined;
    if (i % 10 === 0) {
      stream = await openSse(second.url, { headers: { 'mcp-session-id': sid } });
      await stream.next((blk) => blk.comment !== undefined);
    }
    expect((await send(first.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(200);
    await stream?.ended;
  }
  await new Promise((r) => setTimeout(r, 200));
  for (const replica of [a, b])
    expect(replica.manager.stats()).toEqual({
      inflight: 0,
      sessionsWithStreams: 0,
      wakeChannels: 0,
      relays: 0,
      awaits: 0,
      listeners: 0,
      sweeping: 1,
    });
  // A leak would leave ~1,000 timers; a client socket or reconnect timer of the moment may take a little longer to go.
  for (let waited = 0; timers() > timersBefore && waited < 3_000; waited += 100)
    await new Promise((r) => setTimeout(r, 100));
  expect(timers()).toBeLessThanOrEqual(timersBefore);
  expect((await redis.pubsub('CHANNELS', `${prefix}:*`)).length).toBe(channelsBefore);
  // Keys of earlier tests may expire meanwhile; the cycles must not have left any of their own.
  expect((await redis.keys(`${prefix}:*`)).filter((k) => !keysBefore.includes(k))).toEqual([]);
}, 120_000);
