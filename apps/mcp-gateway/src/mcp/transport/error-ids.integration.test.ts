/**
 * Every JSON-RPC error of the MCP endpoint keeps the request's id whenever the request was
 * parsed (JSON-RPC 2.0 §5: `"id": null` only when the id could not be read): the MCP
 * SDK cannot parse an error with `"id": null` (`invalid_union`) and loses the answer. Through
 * the real app over HTTP, with sessions in Redis; the outage is a throwaway `redis-server` of
 * the test's own, stopped while the authentication (run before the body is read) asks it.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { Redis } from 'ioredis';
import {
  startThrowawayRedis,
  type ThrowawayRedis,
} from '../../../../../packages/runtime/test-fixtures/throwaway-redis';
import {
  deleteKeysWithPrefix,
  initialize,
  send,
  startReplica,
  TEST_REDIS_URL,
  type TestReplica,
} from './mcp-harness.test-support';

const prefix = `it-error-ids-${randomBytes(4).toString('hex')}`;
let replica: TestReplica;
let own: ThrowawayRedis;
let authRedis: Redis;

/** Authentication that reads Redis (as the failure limiter does), principal `alice`. */
async function redisAuth(_req: Request, res: Response, next: NextFunction): Promise<void> {
  try {
    await authRedis.get('auth-check');
    res.locals.principal = { id: 'alice', subject: 'alice', role: 'admin', credentialType: 'none' };
    next();
  } catch (err) {
    next(err);
  }
}

beforeAll(async () => {
  own = await startThrowawayRedis();
  authRedis = new Redis(own.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: false });
  await new Promise<void>((resolve) => authRedis.once('ready', () => resolve()));
  replica = await startReplica({
    prefix,
    authenticate: (req, res, next) => void redisAuth(req, res, next),
  });
});

afterAll(async () => {
  await replica?.close();
  authRedis?.disconnect();
  await own?.stop();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

const ping = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'ping' });
const toolCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });

describe('errors answer the ids of the parsed request', () => {
  test('an unknown session: a single request keeps its id, a batch gets one error per request', async () => {
    const headers = { 'mcp-session-id': 'a'.repeat(64), 'mcp-protocol-version': '2025-03-26' };
    const single = await send(replica.url, { headers, body: ping('p-1') });
    expect(single).toMatchObject({ status: 404, json: { id: 'p-1', error: { code: -32001 } } });
    const batch = await send(replica.url, {
      headers,
      body: [ping(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, ping(2)],
    });
    expect(batch.status).toBe(404);
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', id: 1, error: expect.objectContaining({ code: -32001 }) as unknown },
      { jsonrpc: '2.0', id: 2, error: expect.objectContaining({ code: -32001 }) as unknown },
    ]);
  });

  test('no session header, and a method other than POST, GET or DELETE: the id is kept; an unreadable body: null', async () => {
    const missing = await send(replica.url, { body: ping(7) });
    expect(missing).toMatchObject({ status: 400, json: { id: 7, error: { code: -32000 } } });
    const put = await send(replica.url, { method: 'PUT', body: ping(8) });
    expect(put).toMatchObject({ status: 405, json: { id: 8, error: { code: -32000 } } });
    // A body that is not JSON has no id to keep: null (JSON-RPC 2.0 §5).
    const unreadable = await send(replica.url, { body: '{"jsonrpc": "2.0", "id": 3,' });
    expect(unreadable).toMatchObject({ status: 400, json: { id: null, error: { code: -32700 } } });
  });
});

describe('a Redis outage met before the body was read', () => {
  test('is resource_unavailable naming Redis, with the id: -32005 for a method, an isError result for tools/call, per request in a batch', async () => {
    const sid = await initialize(replica.url);
    await own.stop();
    try {
      const headers = { 'mcp-session-id': sid };
      const read = await send(replica.url, { headers, body: ping(11) });
      expect(read.status).toBe(200);
      expect(read.json).toMatchObject({
        id: 11,
        error: {
          code: -32005,
          message: expect.stringContaining('Redis') as unknown,
          data: { code: 'resource_unavailable', details: { dependency: 'redis' } },
        },
      });
      const call = await send(replica.url, { headers, body: toolCall(12) });
      expect(call.json).toMatchObject({
        id: 12,
        result: {
          isError: true,
          structuredContent: { code: 'resource_unavailable', details: { dependency: 'redis' } },
        },
      });
      const batch = await send(replica.url, {
        headers: { ...headers, 'mcp-protocol-version': '2025-03-26' },
        body: [ping(13), toolCall(14)],
      });
      expect(batch.json).toMatchObject([
        { id: 13, error: { code: -32005 } },
        { id: 14, result: { isError: true } },
      ]);
    } finally {
      await own.start();
    }
  });
});
