/**
 * The error boundary of the MCP endpoint (dagu-model §10, "One way to name a
 * failure's request"): a failure that is not a domain error is logged once,
 * with its stack and the request id, and the client gets only
 * `internal_error` with `details.requestId`, never the failure's message.
 * Driven through the real app (HTTP, session in Redis, dispatcher, request
 * runner) with the real `dagu_read` tool over a backend that throws.
 */
import { randomBytes } from 'node:crypto';
import { DaguError } from '@dagu-mcp/contracts';
import { captureLogs } from '../../../../../packages/runtime/test-fixtures/log-capture';
import { createReadTool } from '../tools/read/read-tool';
import type { ReadBackend, ReadBackends } from '../tools/read/read-backends';
import { READ_TARGETS, type ReadTarget } from '../tools/read/read-targets';
import {
  deleteKeysWithPrefix,
  initialize,
  send,
  startReplica,
  TEST_REDIS_URL,
  type TestReplica,
} from './mcp-harness.test-support';

const SECRET = 'password=hunter2 at db.internal:5432';
const prefix = `it-boundary-${randomBytes(4).toString('hex')}`;
const { logger: capturedLogger, lines } = captureLogs('info');

/** A backend per read target: `dag_spec` throws a bug, `dags` a domain outage, the rest answer. */
function backends(): ReadBackends {
  const fine: ReadBackend = async () => ({ ok: true });
  const byTarget: Partial<Record<ReadTarget, ReadBackend>> = {
    dag_spec: async () => {
      throw new TypeError(`Cannot read properties of undefined (${SECRET})`);
    },
    dags: async () => {
      throw new DaguError('resource_unavailable', 'dag-service did not answer within 10000 ms.', {
        details: { service: 'dag-service', timeoutMs: 10000 },
      });
    },
  };
  return Object.fromEntries(READ_TARGETS.map((target) => [target, byTarget[target] ?? fine])) as ReadBackends;
}

let replica: TestReplica;
let sid: string;

beforeAll(async () => {
  replica = await startReplica({
    prefix,
    logger: capturedLogger,
    tools: {
      dagu_read: createReadTool(backends()),
      broken: async () => {
        throw new Error(`tool exploded: ${SECRET}`);
      },
      outage: async () => {
        throw new DaguError('resource_unavailable', 'The request bus (Redis) is unavailable.', {
          details: { dependency: 'redis' },
        });
      },
    },
    readResource: async (uri) => {
      if (uri.endsWith('/boom')) throw new RangeError(`resource exploded: ${SECRET}`);
      throw new DaguError('resource_not_found', `No resource ${uri}.`);
    },
  });
  sid = await initialize(replica.url);
});

afterAll(async () => {
  await replica?.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

beforeEach(() => {
  lines.length = 0;
});

function post(body: Record<string, unknown>, requestId?: string) {
  return send(replica.url, {
    headers: { 'mcp-session-id': sid, ...(requestId !== undefined ? { 'x-request-id': requestId } : {}) },
    body: { jsonrpc: '2.0', id: 7, ...body },
  });
}

/** The error-level lines of the replica's log. */
const errorLines = () => lines.filter((line) => line.level === 50);

describe('a failure that is not a domain error', () => {
  test('inside a tool: one log line with its stack and request id; the client sees only internal_error with details.requestId', async () => {
    const answer = await post(
      { method: 'tools/call', params: { name: 'dagu_read', arguments: { target: 'dag_spec', name: 'nightly' } } },
      'req-tool-1',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toBe('req-tool-1');
    expect(answer.json).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        isError: true,
        content: [{ type: 'text', text: 'Internal error.' }],
        structuredContent: {
          code: 'internal_error',
          message: 'Internal error.',
          target: 'dag_spec',
          uri: 'dagu://dags/nightly/spec',
          details: { requestId: 'req-tool-1' },
        },
      },
    });
    expect(answer.text).not.toContain('hunter2');

    const logged = errorLines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      msg: 'mcp request failed',
      requestId: 'req-tool-1',
      method: 'tools/call',
      target: 'dagu_read',
    });
    const err = logged[0]?.err as { type: string; message: string; stack: string };
    expect(err.type).toBe('TypeError');
    expect(err.stack).toContain('TypeError: Cannot read properties of undefined');
    expect(err.stack).toMatch(/error-boundary\.integration\.test\.ts/);
  });

  test('thrown by a tool handler itself: still an isError result, logged once', async () => {
    const answer = await post({ method: 'tools/call', params: { name: 'broken', arguments: {} } }, 'req-tool-2');
    expect(answer.json).toMatchObject({
      id: 7,
      result: {
        isError: true,
        structuredContent: { code: 'internal_error', message: 'Internal error.', details: { requestId: 'req-tool-2' } },
      },
    });
    expect(answer.text).not.toContain('hunter2');
    expect(errorLines()).toHaveLength(1);
    expect(errorLines()[0]).toMatchObject({
      requestId: 'req-tool-2',
      target: 'broken',
      err: { message: `tool exploded: ${SECRET}` },
    });
  });

  test('inside resources/read: a JSON-RPC -32603 whose data is internal_error with details.requestId, logged once', async () => {
    const answer = await post({ method: 'resources/read', params: { uri: 'dagu://reference/boom' } }, 'req-res-1');
    expect(answer.json).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32603,
        message: 'Internal error.',
        data: {
          code: 'internal_error',
          message: 'Internal error.',
          resourceUri: 'dagu://reference/boom',
          operation: 'resources/read',
          details: { requestId: 'req-res-1' },
        },
      },
    });
    expect(answer.text).not.toContain('hunter2');
    const logged = errorLines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      requestId: 'req-res-1',
      method: 'resources/read',
      target: 'dagu://reference/boom',
    });
    expect((logged[0]?.err as { stack: string }).stack).toContain('RangeError: resource exploded');
  });

  test('without an X-Request-Id the gateway mints one, and the log and the client carry the same', async () => {
    const answer = await post({ method: 'tools/call', params: { name: 'broken', arguments: {} } });
    const minted = answer.headers['x-request-id'];
    expect(typeof minted).toBe('string');
    expect(answer.json).toMatchObject({ result: { structuredContent: { details: { requestId: minted } } } });
    expect(errorLines()[0]).toMatchObject({ requestId: minted });
  });
});

describe('domain errors', () => {
  test('resource_unavailable from a tool keeps its details, gains details.requestId, and logs nothing at error level', async () => {
    const answer = await post(
      { method: 'tools/call', params: { name: 'dagu_read', arguments: { target: 'dags' } } },
      'req-dom-1',
    );
    expect(answer.json).toMatchObject({
      result: {
        isError: true,
        structuredContent: {
          code: 'resource_unavailable',
          message: 'dag-service did not answer within 10000 ms.',
          details: { service: 'dag-service', timeoutMs: 10000, requestId: 'req-dom-1' },
        },
      },
    });
    expect(errorLines()).toEqual([]);
  });

  test('a DaguError thrown out of a tool handler is its isError result, with details.requestId, and logs nothing at error level', async () => {
    const answer = await post({ method: 'tools/call', params: { name: 'outage', arguments: {} } }, 'req-dom-3');
    expect(answer.json).toMatchObject({
      result: {
        isError: true,
        content: [{ type: 'text', text: 'The request bus (Redis) is unavailable.' }],
        structuredContent: { code: 'resource_unavailable', details: { dependency: 'redis', requestId: 'req-dom-3' } },
      },
    });
    expect(errorLines()).toEqual([]);
  });

  test('resource_not_found on resources/read carries no request id and logs nothing at error level', async () => {
    const answer = await post({ method: 'resources/read', params: { uri: 'dagu://reference/nope' } }, 'req-dom-2');
    expect(answer.json).toMatchObject({ error: { code: -32002, data: { code: 'resource_not_found' } } });
    expect(JSON.stringify(answer.json)).not.toContain('req-dom-2');
    expect(errorLines()).toEqual([]);
  });
});
