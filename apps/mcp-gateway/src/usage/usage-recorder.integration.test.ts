import { randomBytes } from 'node:crypto';
import { createAppMetrics, createLogger, createPool, migrate, type Pool } from '@dagu-mcp/runtime';
import { GATEWAY_MIGRATIONS } from '../db/migrations';
import { queryToolUsage, type ToolCallRecord } from './tool-call.repository';
import { UsageRecorder } from './usage-recorder';

/**
 * Agent usage against the real PostgreSQL: calls buffered and written in
 * batches, figures per tool with percentiles, calls kept across a failed write, Prometheus
 * labels bounded.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `usage_${randomBytes(4).toString('hex')}`;
const logger = createLogger({ name: 'usage-test', level: 'silent' });
let pool: Pool;

const call = (tool: string, durationMs: number, over: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  at: new Date(),
  agentId: 'agent-1',
  workspace: 'billing',
  agentSlug: 'bot',
  tool,
  kind: 'rest_operation',
  durationMs,
  isError: false,
  errorCode: null,
  ...over,
});

beforeAll(async () => {
  pool = createPool({ url: DATABASE_URL, schema, max: 2, logger });
  await migrate(pool, schema, GATEWAY_MIGRATIONS);
});

afterAll(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

test('calls are written in one batch and read back per tool with percentiles', async () => {
  const recorder = new UsageRecorder({
    pool,
    registry: createAppMetrics({ app: 't', processMetrics: false }).registry,
    logger,
  });
  const from = new Date(Date.now() - 1000);
  for (let ms = 1; ms <= 100; ms++) recorder.record(call('get_refund', ms));
  recorder.record(call('get_refund', 500, { isError: true, errorCode: 'upstream_error' }));
  recorder.record(call('other', 7, { agentId: 'agent-2' }));
  // Nothing is written before a flush (the call path never waits for PostgreSQL).
  expect((await pool.query('SELECT 1 FROM agent_tool_calls')).rowCount).toBe(0);
  await recorder.stop();
  const usage = await queryToolUsage(pool, 'agent-1', from, new Date(Date.now() + 1000));
  expect(usage).toEqual([{ tool: 'get_refund', calls: 101, errors: 1, p50Ms: 51, p95Ms: 96, p99Ms: 100 }]);
});

test('a failed write keeps the calls for the next flush; labels past the bound fold into _other', async () => {
  const metrics = createAppMetrics({ app: 't', processMetrics: false });
  // A schema without the table yet: the first write fails (as while PostgreSQL is away).
  const later = `${schema}_later`;
  const other = createPool({ url: DATABASE_URL, schema: later, max: 1, logger });
  try {
    const recorder = new UsageRecorder({ pool: other, registry: metrics.registry, logger, maxSeries: 1 });
    recorder.record(call('a', 1));
    recorder.record(call('b', 2));
    await recorder.flush();
    await migrate(other, later, GATEWAY_MIGRATIONS);
    recorder.record(call('a', 3));
    await recorder.stop();
    const { rows } = await other.query<{ tool: string }>('SELECT tool FROM agent_tool_calls ORDER BY id');
    expect(rows.map((r) => r.tool)).toEqual(['a', 'b', 'a']);
    const text = (await metrics.render()).body;
    expect(text).toContain('tool="a",outcome="ok"');
    expect(text).toContain('workspace="_other",agent="_other",tool="_other",outcome="ok"');
  } finally {
    await other.query(`DROP SCHEMA IF EXISTS "${later}" CASCADE`);
    await other.end();
  }
});

test('the retention sweep deletes calls older than the retention, and only those', async () => {
  const recorder = new UsageRecorder({
    pool,
    registry: createAppMetrics({ app: 't', processMetrics: false }).registry,
    logger,
    retentionDays: 30,
  });
  const now = new Date('2026-11-30T12:00:00Z');
  const day = 86_400_000;
  const agentId = 'agent-retention';
  recorder.record(call('old', 5, { agentId, at: new Date(now.getTime() - 31 * day) }));
  recorder.record(call('old', 5, { agentId, at: new Date(now.getTime() - 400 * day) }));
  recorder.record(call('kept', 5, { agentId, at: new Date(now.getTime() - 29 * day) }));
  await recorder.stop();
  expect(await recorder.prune(now)).toBe(2);
  const left = await pool.query<{ tool: string }>('SELECT tool FROM agent_tool_calls WHERE agent_id = $1', [agentId]);
  expect(left.rows.map((r) => r.tool)).toEqual(['kept']);
  // A second sweep finds nothing more to delete.
  expect(await recorder.prune(now)).toBe(0);
});
