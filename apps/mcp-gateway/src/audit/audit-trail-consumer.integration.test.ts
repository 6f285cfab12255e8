import { randomBytes } from 'node:crypto';
import { AUDIT_BATCH_QUEUE, AUDIT_QUEUE, type OutboxEntry } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { Queue } from 'bullmq';
import { deleteKeysWithPrefix, TEST_REDIS_URL } from '../../../../packages/bus/test-fixtures/bus-test-env';
import { openGatewayTestDb, type GatewayTestDb } from '../auth/auth-db.test-support';
import { AuditTrailConsumer } from './audit-trail-consumer';

/**
 * The gateway's end of the outbox drains (docs/decisions.md "Attribution and
 * mutation outcomes"), against real Redis and PostgreSQL: an entry delivered
 * twice — what a service that died between sending its rows and marking them
 * drained does on its next drain — is stored once.
 */
const prefix = `it-audit-trail-${randomBytes(4).toString('hex')}`;
let db: GatewayTestDb;
let consumer: AuditTrailConsumer;
let queue: Queue;
let batches: Queue;

beforeAll(async () => {
  db = await openGatewayTestDb('audit_trail');
  consumer = new AuditTrailConsumer({
    redisUrl: TEST_REDIS_URL,
    prefix,
    pool: db.pool,
    logger: createLogger({ name: 'audit-trail-test', level: 'silent' }),
  });
  queue = new Queue(AUDIT_QUEUE, { connection: { url: TEST_REDIS_URL }, prefix });
  batches = new Queue(AUDIT_BATCH_QUEUE, { connection: { url: TEST_REDIS_URL }, prefix });
});

afterAll(async () => {
  await queue.close();
  await batches.close();
  await consumer.close();
  await db.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

const entry: OutboxEntry = {
  source: 'dag',
  sourceId: '42',
  at: '2026-12-01T10:00:00.000Z',
  action: 'dag.upserted',
  actor: 'api_key:ci',
  principalId: 'k-1',
  credentialType: 'api_key',
  target: 'dagu://dags/nightly/spec',
  requestId: 'req-1',
  details: { version: 3, created: false },
};

async function rowsOf(sourceId: string): Promise<Array<Record<string, unknown>>> {
  const { rows } = await db.pool.query(
    'SELECT category, action, actor, principal_id, credential_type, target, outcome, request_id, details FROM audit_events WHERE source_id = $1',
    [sourceId],
  );
  return rows as Array<Record<string, unknown>>;
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('an outbox entry delivered twice is stored once, with its author', async () => {
  await queue.add(entry.action, entry, { jobId: 'dag-42-first' });
  await queue.add(entry.action, entry, { jobId: 'dag-42-again' });
  await until(async () => (await queue.getJobCounts('completed')).completed === 2);
  expect(await rowsOf('42')).toEqual([
    {
      category: 'dag',
      action: 'dag.upserted',
      actor: 'api_key:ci',
      principal_id: 'k-1',
      credential_type: 'api_key',
      target: 'dagu://dags/nightly/spec',
      outcome: 'succeeded',
      request_id: 'req-1',
      details: { version: 3, created: false },
    },
  ]);
});

test('the same row id from another service is another row', async () => {
  await queue.add(entry.action, { ...entry, source: 'wiki', action: 'wiki.page.deleted' }, { jobId: 'wiki-42' });
  await until(async () => (await rowsOf('42')).length === 2);
  expect((await rowsOf('42')).map((row) => row.action).sort()).toEqual(['dag.upserted', 'wiki.page.deleted']);
});

test('a drain pass arrives as one job and is stored in one go; the pass sent again with more rows adds only the new ones', async () => {
  const pass = ['100', '101', '102'].map((sourceId, i) => ({
    ...entry,
    source: 'run',
    sourceId,
    action: 'run.started',
    target: `dagu://runs/nightly/r${i}`,
    details: i === 1 ? null : { attemptId: `a${i}`, note: 'quotes " and \\ back\\slashes' },
  }));
  await batches.add('run', { entries: pass });
  await until(async () => (await rowsOf('102')).length === 1);
  expect(await rowsOf('100')).toEqual([
    expect.objectContaining({
      category: 'run',
      action: 'run.started',
      target: 'dagu://runs/nightly/r0',
      details: { attemptId: 'a0', note: 'quotes " and \\ back\\slashes' },
    }),
  ]);
  expect((await rowsOf('101'))[0]?.details).toBeNull();
  // A service that died before marking the pass drained claims it again, with a row committed since.
  const again = [...pass, { ...pass[0], sourceId: '103', target: 'dagu://runs/nightly/r3' }];
  await batches.add('run', { entries: again });
  await until(async () => (await rowsOf('103')).length === 1);
  for (const id of ['100', '101', '102', '103']) expect(await rowsOf(id)).toHaveLength(1);
});

test('a malformed entry costs only itself: the rest of its batch is stored', async () => {
  await batches.add('run', {
    entries: [
      { ...entry, source: 'run', sourceId: '200' },
      { source: 'run' },
      { ...entry, source: 'run', sourceId: '201', at: 'not a time' },
      { ...entry, source: 'run', sourceId: '202' },
    ],
  });
  await until(async () => (await rowsOf('202')).length === 1);
  expect(await rowsOf('200')).toHaveLength(1);
  expect(await rowsOf('201')).toHaveLength(0);
  expect(await batches.getJobCounts('failed')).toEqual({ failed: 0 });
});
