import { createAppMetrics, createLogger, createPool, migrate, type Pool, type Registry } from '@dagu-mcp/runtime';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../../../../packages/runtime/test-fixtures/throwaway-postgres';
import { GATEWAY_MIGRATIONS } from '../db/migrations';
import { AUDIT_DROPPED_METRIC, AuditLog } from './audit-log';

/**
 * The gateway's audit events survive a PostgreSQL outage: on its
 * own throwaway PostgreSQL (never the machine's), stopped for 60 s while
 * events keep coming, every event is in `audit_events` once it is back, in
 * order and once each; past the buffer's bound new events are dropped,
 * counted in the metric and in one `audit.buffer.dropped` row.
 */
const OUTAGE_MS = 60_000;
const logger = createLogger({ name: 'audit-outage-test', level: 'silent' });
const alice = { id: 'u-alice', subject: 'alice', role: 'viewer' as const, credentialType: 'api_key' as const };
let pg: ThrowawayPostgres;
let pool: Pool;

beforeAll(async () => {
  pg = await startThrowawayPostgres();
  pool = createPool({ url: pg.url, schema: 'gateway', max: 4, logger });
  await migrate(pool, 'gateway', GATEWAY_MIGRATIONS);
}, 60_000);

afterAll(async () => {
  await pool?.end().catch(() => undefined);
  await pg?.destroy();
});

const event = (label: string, i: number) => ({
  category: 'mcp',
  action: 'mcp.tool_call.received',
  principal: alice,
  target: `${label}:${i}`,
  outcome: 'received',
});

async function targets(label: string): Promise<string[]> {
  const { rows } = await pool.query<{ target: string }>(
    'SELECT target FROM audit_events WHERE target LIKE $1 ORDER BY id',
    [`${label}:%`],
  );
  return rows.map((row) => row.target);
}

/** The value of the dropped-events counter. */
async function droppedIn(registry: Registry): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(AUDIT_DROPPED_METRIC)?.get();
  return metric?.values[0]?.value;
}

async function eventually(check: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test(
  'a 60 s PostgreSQL outage loses no audit event under the bound: all written once, in order, after it',
  async () => {
    const { registry } = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
    const audit = new AuditLog({ pool, logger, buffer: { maxEvents: 10_000 }, registry });
    let n = 0;
    const more = (count: number): void => {
      for (let i = 0; i < count; i++) audit.record(event('outage', n++));
    };
    more(100);
    await audit.flush();
    await pg.stop('fast');
    // 50 events every 500 ms through the whole outage: 6,000 events, under the 10,000 bound.
    const started = Date.now();
    while (Date.now() - started < OUTAGE_MS) {
      more(50);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(audit.buffered).toBeGreaterThan(5_000);
    await pg.start();
    more(100);
    await eventually(async () => (await targets('outage')).length >= n, 30_000);
    expect(await targets('outage')).toEqual(Array.from({ length: n }, (_, i) => `outage:${i}`));
    expect(await droppedIn(registry)).toBe(0);
    await audit.close();
  },
  OUTAGE_MS + 90_000,
);

test('past the bound new events are dropped, counted and summed up in one row once PostgreSQL is back', async () => {
  const { registry } = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
  const audit = new AuditLog({ pool, logger, buffer: { maxEvents: 200 }, registry });
  await pg.stop('fast');
  for (let i = 0; i < 250; i++) audit.record(event('bounded', i));
  await audit.flush();
  expect(audit.buffered).toBe(201); // the 200 and the row saying 50 were dropped
  expect(await droppedIn(registry)).toBe(50);
  await pg.start();
  await eventually(async () => (await targets('bounded')).length === 200, 30_000);
  expect(await targets('bounded')).toEqual(Array.from({ length: 200 }, (_, i) => `bounded:${i}`));
  await eventually(async () => {
    const { rows } = await pool.query<{ details: { dropped: number; maxEvents: number } }>(
      "SELECT details FROM audit_events WHERE action = 'audit.buffer.dropped'",
    );
    return rows.length === 1 && rows[0]?.details.dropped === 50 && rows[0].details.maxEvents === 200;
  }, 10_000);
  await audit.close();
}, 90_000);
