import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineOps } from '@dagu-mcp/contracts';
import { createHandlerContext, type HandlerContext, SILENT_LOGGER } from '@dagu-mcp/bus';
import { createPool, markReplyRecorded, MUTATION_LOG_SQL, mutationRecordInsert, type Pool } from '@dagu-mcp/runtime';
import { captureLogs } from '../../runtime/test-fixtures/log-capture';
import { withMutationRecords } from './mutation-records';

/**
 * The mutation wrapper stores a handler's reply on its record after the handler returns,
 * unless the handler's own statement stored it with the change (`markReplyRecorded`:
 * a run start writes run, record and reply in one statement). Against real PostgreSQL.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `kit_records_${randomBytes(4).toString('hex')}`;
const principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' } as const;
const ops = defineOps({
  note: { request: z.object({ mark: z.boolean() }), reply: z.object({ from: z.string() }), mutation: true },
});
const { logger } = captureLogs('warn');
let pool: Pool;

beforeAll(async () => {
  pool = createPool({ url: DATABASE_URL, schema, logger });
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(MUTATION_LOG_SQL);
});
afterAll(async () => {
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
});

/** The handler records its change with reply `{from: 'statement'}` in one statement, and returns `{from: 'handler'}`. */
const handlers = {
  note: async ({ mark }: { mark: boolean }, ctx: HandlerContext) => {
    const record = mutationRecordInsert(ctx, { action: 'note.added' }, { from: 'statement' }, 1, '(SELECT 1) AS one');
    await pool.query(record.sql, record.values);
    if (mark) markReplyRecorded(ctx);
    return { from: 'handler' };
  },
};

async function call(jobId: string, mark: boolean): Promise<unknown> {
  const wrapped = withMutationRecords(ops, handlers, { pool, logger });
  // With an idempotency key the wrapper awaits its store before replying, so the row is final here.
  const { context, dispose } = createHandlerContext({
    principal,
    deadline: Date.now() + 10_000,
    op: 'note',
    jobId,
    idempotencyKey: `key-${jobId}`,
    payloadHash: 'h',
    traceContext: {},
    logger: SILENT_LOGGER,
  });
  try {
    expect(await wrapped.note({ mark }, context)).toEqual({ from: 'handler' });
  } finally {
    dispose();
  }
  const { rows } = await pool.query<{ result: unknown }>('SELECT result FROM mutation_log WHERE job_id = $1', [jobId]);
  return rows.map((row) => row.result);
}

it('a reply marked as stored by the handler’s statement is not stored again', async () => {
  expect(await call('job-marked', true)).toEqual([{ from: 'statement' }]);
});

it('an unmarked reply is stored by the wrapper over the record', async () => {
  expect(await call('job-unmarked', false)).toEqual([{ from: 'handler' }]);
});
