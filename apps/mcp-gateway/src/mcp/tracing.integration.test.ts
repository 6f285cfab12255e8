import { randomBytes } from 'node:crypto';
import { BusClient, ServiceWorker, type HandlerMap } from '@dagu-mcp/bus';
import { defineOps, type Principal } from '@dagu-mcp/contracts';
import {
  createLogger,
  createPool,
  InMemorySpanExporter,
  setupTracing,
  SpanKind,
  type Pool,
  type ReadableSpan,
  type Tracing,
} from '@dagu-mcp/runtime';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createMcpDispatcher } from './mcp-dispatcher';
import type { McpCallContext, McpHandlers } from './mcp-types';
import { McpKeys } from './transport/redis-keys';
import { SessionStore, type SessionRecord } from './transport/session-store';

/**
 * One trace across the bus (deployment issue, "OpenTelemetry traces"): the
 * gateway's MCP span → its bus call span → the service's handler span (in a
 * ServiceWorker, continued from the job's `traceContext`) → the handler's SQL
 * span, all under one trace id with parent links, recorded by an in-memory
 * exporter. Real Redis (random bus prefix) and PostgreSQL (random schema).
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const id = randomBytes(4).toString('hex');
const prefix = `trace-${id}`;
const schema = `trace_${id}`;
const principal: Principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' };
const logger = createLogger({ name: 'tracing-test', level: 'silent' });

const ops = defineOps({
  lookup: {
    request: z.object({ key: z.string() }),
    reply: z.object({ value: z.string() }),
    mutation: false,
  },
});

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let pool: Pool;
let worker: ServiceWorker<typeof ops>;
let client: BusClient;
let redis: Redis;

beforeAll(async () => {
  tracing = setupTracing({ serviceName: 'tracing-test', exporter });
  pool = createPool({ url: DATABASE_URL, schema, max: 2, logger });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query('CREATE TABLE kv (key text PRIMARY KEY, value text NOT NULL)');
  await pool.query(`INSERT INTO kv VALUES ('greeting', 'hello')`);
  const handlers: HandlerMap<typeof ops> = {
    lookup: async ({ key }) => {
      const result = await pool.query<{ value: string }>('SELECT value FROM kv WHERE key = $1', [key]);
      return { value: result.rows[0]?.value ?? '' };
    },
  };
  worker = new ServiceWorker({ service: 'dag', catalog: ops, handlers, redisUrl: REDIS_URL, prefix });
  client = new BusClient({ redisUrl: REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  redis = new Redis(REDIS_URL, { lazyConnect: true });
  await Promise.all([worker.start(), client.start()]);
});

afterAll(async () => {
  await client.close();
  await worker.close();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await tracing.shutdown();
});

/** A gateway dispatcher whose one tool reads over the bus. */
function dispatcherWithBusTool() {
  const handlers: McpHandlers = {
    tools: {
      dagu_read: async (_args, ctx) => {
        const reply = await client.call('dag', ops, 'lookup', { key: 'greeting' }, { principal: ctx.principal });
        return { content: [{ type: 'text', text: reply.value }] };
      },
    },
    listResources: () => [],
    listResourceTemplates: () => [],
    readResource: async () => ({ contents: [] }),
    audit: () => undefined,
  };
  return createMcpDispatcher({
    handlers,
    sessions: new SessionStore(redis, new McpKeys(prefix), 60_000),
    version: 'test',
  });
}

const session: SessionRecord = {
  id: 's1',
  protocolVersion: '2025-06-18',
  principalId: principal.id,
  clientInfo: {},
  clientCapabilities: {},
  logLevel: undefined,
  createdAt: Date.now(),
};

const ctx: McpCallContext = {
  principal,
  signal: new AbortController().signal,
  sessionId: 's1',
  progressToken: undefined,
  notify: async () => undefined,
};

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found).toHaveLength(1);
  const [span] = found;
  if (span === undefined) throw new Error(`no span ${name}`);
  return span;
}

describe('a trace from the gateway through the bus into the service and its SQL', () => {
  it('shares one trace id, with each span the child of the one before', async () => {
    exporter.reset();
    const dispatcher = dispatcherWithBusTool();
    const result = await dispatcher.handle(
      'tools/call',
      { name: 'dagu_read', arguments: { target: 'dag' } },
      { ctx, session },
    );
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'hello' }] });

    const spans = exporter.getFinishedSpans();
    const mcp = only(spans, 'mcp tools/call dagu_read');
    const bus = only(spans, 'bus dag.lookup');
    const handler = only(spans, 'handle lookup');
    const sql = only(spans, 'pg SELECT');

    const traceId = mcp.spanContext().traceId;
    for (const span of [bus, handler, sql]) expect(span.spanContext().traceId).toBe(traceId);
    expect(mcp.parentSpanContext).toBeUndefined();
    expect(bus.parentSpanContext?.spanId).toBe(mcp.spanContext().spanId);
    expect(handler.parentSpanContext?.spanId).toBe(bus.spanContext().spanId);
    expect(handler.parentSpanContext?.isRemote).toBe(true);
    expect(sql.parentSpanContext?.spanId).toBe(handler.spanContext().spanId);

    expect(mcp.kind).toBe(SpanKind.SERVER);
    expect(bus.kind).toBe(SpanKind.CLIENT);
    expect(handler.kind).toBe(SpanKind.CONSUMER);
    expect(sql.kind).toBe(SpanKind.CLIENT);
    expect(sql.attributes['db.query.text']).toBe('SELECT value FROM kv WHERE key = $1');
    expect(sql.attributes['db.system.name']).toBe('postgresql');
  });

  it('keeps concurrent traces apart, also when queries wait for a pooled connection', async () => {
    exporter.reset();
    const dispatcher = dispatcherWithBusTool();
    // 8 concurrent calls over a pool of 2: queries queue for connections.
    await Promise.all(
      Array.from({ length: 8 }, () =>
        dispatcher.handle('tools/call', { name: 'dagu_read', arguments: {} }, { ctx, session }),
      ),
    );
    const spans = exporter.getFinishedSpans();
    const roots = spans.filter((s) => s.name === 'mcp tools/call dagu_read');
    expect(roots).toHaveLength(8);
    for (const root of roots) {
      const inTrace = spans.filter((s) => s.spanContext().traceId === root.spanContext().traceId);
      expect(inTrace.map((s) => s.name).sort()).toEqual([
        'bus dag.lookup',
        'handle lookup',
        'mcp tools/call dagu_read',
        'pg SELECT',
      ]);
    }
  });

  it('makes no SQL span for queries outside a trace', async () => {
    exporter.reset();
    await pool.query('SELECT 1');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
