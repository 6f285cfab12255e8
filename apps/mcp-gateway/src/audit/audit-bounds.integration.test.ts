import { createLogger } from '@dagu-mcp/runtime';
import { openGatewayTestDb, type GatewayTestDb } from '../auth/auth-db.test-support';
import { AuditLog } from './audit-log';

/**
 * Audit rows of unauthenticated traffic are bounded, against the real PostgreSQL: rate-limited
 * per replica, the excess counted in one summary row, and kept only for their
 * retention; rows with an author are untouched.
 */
let db: GatewayTestDb;
const logger = createLogger({ name: 'audit-test', level: 'silent' });
const alice = { id: 'u-alice', subject: 'alice', role: 'viewer' as const, credentialType: 'api_key' as const };

beforeAll(async () => {
  db = await openGatewayTestDb('audit_bounds');
});
afterAll(async () => {
  await db.close();
});

const denied = (i: number) => ({
  category: 'rest',
  action: 'rest.request.denied',
  principal: undefined,
  target: `GET /api/v1/dags/${i}`,
  outcome: 'denied',
});

async function actions(): Promise<Array<{ action: string; n: number; details: unknown }>> {
  const result = await db.pool.query(
    'SELECT action, count(*)::int AS n, max(details::text) AS details FROM audit_events GROUP BY action ORDER BY action',
  );
  return result.rows.map((row: { action: string; n: number; details: string | null }) => ({
    action: row.action,
    n: row.n,
    details: row.details === null ? null : (JSON.parse(row.details) as unknown),
  }));
}

test('a flood of unauthenticated requests writes its rate and one summary row; authored rows all go in', async () => {
  const audit = new AuditLog({ pool: db.pool, logger, unauthenticated: { perMinute: 3, retentionDays: 7 } });
  for (let i = 0; i < 50; i++) audit.record(denied(i));
  audit.record({ category: 'rest', action: 'rest.request.denied', principal: alice, outcome: 'denied' });
  audit.record({ category: 'dag', action: 'dag.upserted', principal: alice, outcome: 'succeeded' });
  await audit.close();
  expect(await actions()).toEqual([
    { action: 'audit.unauthenticated.suppressed', n: 1, details: { dropped: 47, perMinute: 3 } },
    { action: 'dag.upserted', n: 1, details: null },
    { action: 'rest.request.denied', n: 4, details: null },
  ]);
});

test('unauthenticated rows past their retention are swept; authored rows stay', async () => {
  await db.pool.query('DELETE FROM audit_events');
  await db.pool.query(
    `INSERT INTO audit_events (at, category, action, actor, principal_id, credential_type, outcome)
     VALUES (now() - interval '8 days', 'rest', 'rest.request.denied', 'unknown', 'unknown', 'none', 'denied'),
            (now() - interval '1 day', 'rest', 'rest.request.denied', 'unknown', 'unknown', 'none', 'denied'),
            (now() - interval '30 days', 'dag', 'dag.upserted', 'alice', 'u-alice', 'api_key', 'succeeded')`,
  );
  const audit = new AuditLog({ pool: db.pool, logger, unauthenticated: { perMinute: 3, retentionDays: 7 } });
  expect(await audit.sweepUnauthenticated()).toBe(1);
  await audit.close();
  const left = await db.pool.query('SELECT action FROM audit_events ORDER BY at');
  expect(left.rows).toEqual([{ action: 'dag.upserted' }, { action: 'rest.request.denied' }]);
});
