/**
 * Bounds of the MCP transport against real Redis (docs/security.md "Bounds and browser rules"): a
 * 2025-03-26 JSON-RPC batch holds at most `MCP_BATCH_MAX_MESSAGES` messages,
 * and the client-sent part of a session record (`clientInfo`, `capabilities`,
 * loaded on every request of the session) at most
 * `MCP_SESSION_RECORD_MAX_BYTES`; a session holds at most
 * `MCP_SUBSCRIPTIONS_MAX` resource subscriptions, in a set that expires with
 * the session.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { captureLogs } from '../../../../../packages/runtime/test-fixtures/log-capture';
import { sessionRef } from '../../http/request-log';
import { McpKeys } from './redis-keys';
import { newSessionId, SessionStore } from './session-store';
import {
  deleteKeysWithPrefix,
  initialize,
  send,
  startReplica,
  TEST_REDIS_URL,
  type TestReplica,
} from './mcp-harness.test-support';

const prefix = `it-mcp-bounds-${randomBytes(4).toString('hex')}`;
let replica: TestReplica;

beforeAll(async () => {
  replica = await startReplica({ prefix, maxBatchMessages: 3, maxSessionRecordBytes: 2048, maxSubscriptions: 2 });
});

afterAll(async () => {
  await replica?.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('JSON-RPC batches are bounded (2025-03-26)', () => {
  test('a batch up to the bound is answered; one past it is 400 -32600', async () => {
    const sid = await initialize(replica.url, 'alice', '2025-03-26');
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' };
    const ok = await send(replica.url, { headers, body: [ping(1), ping(2), ping(3)] });
    expect(ok.status).toBe(200);
    expect(ok.json).toHaveLength(3);
    const big = await send(replica.url, { headers, body: [ping(1), ping(2), ping(3), ping(4)] });
    expect(big.status).toBe(400);
    expect(big.json).toMatchObject({ error: { code: -32600, message: expect.stringContaining('at most 3') } });
  });
});

describe('session records are bounded', () => {
  test('initialize with oversized capabilities is refused with -32602 and creates no session', async () => {
    const answer = await send(replica.url, {
      body: {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { experimental: { blob: { data: 'x'.repeat(4096) } } },
          clientInfo: { name: 'big', version: '1' },
        },
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 0, error: { code: -32602, message: expect.stringContaining('2048') } });
    expect(answer.headers['mcp-session-id']).toBeUndefined();
  });

  test('a session within the bound opens as before', async () => {
    await expect(initialize(replica.url, 'alice', '2025-11-25', { roots: { listChanged: true } })).resolves.toMatch(
      /^[0-9a-f]{64}$/,
    );
  });
});

describe('subscriptions per session are bounded', () => {
  const subscribe = (sid: string, uri: string, id: number) =>
    send(replica.url, {
      headers: { 'mcp-session-id': sid },
      body: { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } },
    });

  test('past the bound a subscribe is refused with -32600 on uri; a held URI and another session are unaffected', async () => {
    const sid = await initialize(replica.url);
    expect((await subscribe(sid, 'dagu://runs/a/r1', 1)).json).toMatchObject({ id: 1, result: {} });
    expect((await subscribe(sid, 'dagu://runs/a/r2', 2)).json).toMatchObject({ id: 2, result: {} });
    const refused = await subscribe(sid, 'dagu://runs/a/r3', 3);
    expect(refused.json).toMatchObject({
      id: 3,
      error: { code: -32600, message: expect.stringContaining('at most 2') },
    });
    expect((await subscribe(sid, 'dagu://runs/a/r1', 4)).json).toMatchObject({ id: 4, result: {} });
    const other = await initialize(replica.url);
    expect((await subscribe(other, 'dagu://runs/a/r3', 5)).json).toMatchObject({ id: 5, result: {} });

    const redis = new Redis(TEST_REDIS_URL);
    try {
      const key = `${prefix}:mcp:{${sid}}:subs`;
      expect((await redis.smembers(key)).sort()).toEqual(['dagu://runs/a/r1', 'dagu://runs/a/r2']);
      expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});

describe('the subscriber index of a URI expires with its sessions', () => {
  test('the index key takes the idle TTL, is refreshed with the session, and is gone once the session expired', async () => {
    const idleTtlMs = 1500;
    const short = await startReplica({ prefix: `${prefix}-index-ttl`, idleTtlMs, sessionCacheMs: 0 });
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const sid = await initialize(short.url);
      const uri = 'dagu://runs/index-ttl/r1';
      const subscribed = await send(short.url, {
        headers: { 'mcp-session-id': sid },
        body: { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri } },
      });
      expect(subscribed.json).toMatchObject({ id: 1, result: {} });
      const key = `${prefix}-index-ttl:mcp:subscribers:${uri}`;
      expect(await redis.smembers(key)).toEqual([sid]);
      const first = await redis.pttl(key);
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(idleTtlMs);
      // Used again after 1 s (before it expires): the session and its index entry live on.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const used = await send(short.url, { headers: { 'mcp-session-id': sid }, body: ping(2) });
      expect(used.status).toBe(200);
      expect(await redis.pttl(key)).toBeGreaterThan(idleTtlMs - 400);
      // Left alone: the session expires, and the index key with it.
      await new Promise((resolve) => setTimeout(resolve, idleTtlMs + 300));
      expect(await redis.exists(`${prefix}-index-ttl:mcp:{${sid}}:session`)).toBe(0);
      expect(await redis.exists(key)).toBe(0);
    } finally {
      redis.disconnect();
      await short.close();
      await deleteKeysWithPrefix(TEST_REDIS_URL, `${prefix}-index-ttl`);
    }
  });
});

describe('raw session ids never reach a log line', () => {
  test('opening and ending a session logs its hashed reference, never the id', async () => {
    const logs = captureLogs('debug');
    const logged = await startReplica({ prefix, logger: logs.logger });
    try {
      const sid = await initialize(logged.url);
      expect((await send(logged.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const messages = logs.lines.map((line) => line.msg);
      expect(messages).toEqual(expect.arrayContaining(['mcp session opened', 'mcp session ended']));
      expect(logs.lines.filter((line) => line.sessionRef === sessionRef(sid)).length).toBeGreaterThanOrEqual(2);
      expect(logs.text()).not.toContain(sid);
    } finally {
      await logged.close();
    }
  });
});

describe('sessions per principal are bounded', () => {
  test('past the bound initialize is 429; another principal, and the same one after a DELETE, open as before', async () => {
    const bounded = await startReplica({ prefix: `${prefix}-per-principal`, maxSessionsPerPrincipal: 2 });
    try {
      const first = await initialize(bounded.url, 'carol');
      await initialize(bounded.url, 'carol');
      const refused = await send(bounded.url, {
        headers: { 'x-test-principal': 'carol' },
        body: {
          jsonrpc: '2.0',
          id: 7,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
        },
      });
      expect(refused.status).toBe(429);
      expect(refused.json).toMatchObject({
        id: 7,
        error: { code: -32000, message: expect.stringContaining('Too many') },
      });
      expect(refused.headers['mcp-session-id']).toBeUndefined();
      await expect(initialize(bounded.url, 'dave')).resolves.toMatch(/^[0-9a-f]{64}$/);
      const ended = await send(bounded.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': first, 'x-test-principal': 'carol' },
      });
      expect(ended.status).toBe(200);
      await expect(initialize(bounded.url, 'carol')).resolves.toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await bounded.close();
      await deleteKeysWithPrefix(TEST_REDIS_URL, `${prefix}-per-principal`);
    }
  });

  test('the bound holds exactly under concurrency: 200 concurrent initializes on two replicas against 20, exactly 20 open', async () => {
    const shared = `${prefix}-concurrent`;
    const replicas = [
      await startReplica({ prefix: shared, maxSessionsPerPrincipal: 20 }),
      await startReplica({ prefix: shared, maxSessionsPerPrincipal: 20 }),
    ];
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          send(replicas[i % 2]?.url ?? '', {
            headers: { 'x-test-principal': 'erin' },
            body: {
              jsonrpc: '2.0',
              id: i,
              method: 'initialize',
              params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
            },
          }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      expect({
        accepted: statuses.filter((s) => s === 200).length,
        refused: statuses.filter((s) => s === 429).length,
      }).toEqual({ accepted: 20, refused: 180 });
    } finally {
      for (const replica of replicas) await replica.close();
      await deleteKeysWithPrefix(TEST_REDIS_URL, shared);
    }
  });

  test('the store admits exactly the bound when 200 creates are in flight at once', async () => {
    const own = `${prefix}-store`;
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const store = new SessionStore(redis, new McpKeys(own), 60_000, 0, undefined, 100, 20);
      const admitted = await Promise.all(
        Array.from({ length: 200 }, () =>
          store.create({
            id: newSessionId(),
            protocolVersion: '2025-11-25',
            principalId: 'frank',
            clientInfo: { name: 'test', version: '1' },
            clientCapabilities: {},
            logLevel: undefined,
            createdAt: Date.now(),
          }),
        ),
      );
      expect(admitted.filter(Boolean)).toHaveLength(20);
    } finally {
      redis.disconnect();
      await deleteKeysWithPrefix(TEST_REDIS_URL, own);
    }
  });
});
