import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineOps, PingReplySchema, PingRequestSchema } from '@dagu-mcp/contracts';
import { BusClient, runWithRequestId } from '@dagu-mcp/bus';
import { deleteKeysWithPrefix } from '../../bus/test-fixtures/bus-test-env';
import { captureLogs } from '../../runtime/test-fixtures/log-capture';
import { createPingHandler } from './ping.handler';
import { loadServiceConfig } from './service-config';
import { startService, type RunningService } from './service-host';

/**
 * A service started by `startService` against the real PostgreSQL (a schema
 * of its own) and Redis (a bus prefix of its own): migrations, bus worker,
 * ops server, graceful stop, and the boundary of a handler's unexpected
 * failure (logged once with its stack, answered `internal_error` without it).
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const suffix = randomBytes(4).toString('hex');
const schema = `kit_${suffix}`;
const prefix = `test-kit-${suffix}`;
const principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' } as const;

const ops = defineOps({
  ping: { request: PingRequestSchema, reply: PingReplySchema, mutation: false },
  note: { request: z.object({ text: z.string() }), reply: z.object({ count: z.number().int() }), mutation: true },
  boom: { request: z.object({}), reply: z.object({}), mutation: false },
});

const { logger, lines } = captureLogs('info');

let running: RunningService;
let client: BusClient;

beforeAll(async () => {
  const config = loadServiceConfig(
    { schema: 'unused', opsPort: 0 },
    {
      REDIS_URL,
      DATABASE_URL,
      DB_SCHEMA: schema,
      DB_POOL_SIZE: '2',
      BUS_PREFIX: prefix,
      OPS_HOST: '127.0.0.1',
      WORKER_CONCURRENCY: '4',
    },
  );
  running = await startService(
    {
      service: 'wiki',
      catalog: ops,
      migrations: [{ id: '001_notes', sql: 'CREATE TABLE notes (text text NOT NULL)' }],
      createHandlers: ({ pool, replica }) => ({
        ping: createPingHandler('wiki-service', replica),
        note: async ({ text }) => {
          await pool.query('INSERT INTO notes (text) VALUES ($1)', [text]);
          const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM notes');
          return { count: Number(rows[0]?.n ?? 0) };
        },
        boom: async () => {
          throw new Error('connection string postgres://svc:hunter2@db leaked into an exception');
        },
      }),
    },
    config,
    logger,
  );
  client = new BusClient({ redisUrl: REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  await client.start();
});

afterAll(async () => {
  await client?.close();
  await running?.stop();
  const cleanup = new (await import('pg')).Pool({ connectionString: DATABASE_URL, max: 1 });
  await cleanup.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await cleanup.end();
  await deleteKeysWithPrefix(REDIS_URL, prefix);
});

const opsUrl = (path: string) => `http://127.0.0.1:${running.opsPort}${path}`;

describe('startService', () => {
  it('migrates its own schema and runs handlers on it over the bus', async () => {
    expect(await client.call('wiki', ops, 'note', { text: 'a' }, { principal })).toEqual({ count: 1 });
    expect(await client.call('wiki', ops, 'note', { text: 'b' }, { principal })).toEqual({ count: 2 });
    const reply = await client.call('wiki', ops, 'ping', {}, { principal });
    expect(reply).toMatchObject({ service: 'wiki-service', replica: running.replica });
  });

  it('serves /healthz, /readyz (Redis, PostgreSQL, migrations) and /metrics with the job durations', async () => {
    expect((await fetch(opsUrl('/healthz'))).status).toBe(200);
    const ready = await fetch(opsUrl('/readyz'));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    const metrics = await (await fetch(opsUrl('/metrics'))).text();
    expect(metrics).toMatch(/op="note"/);
    expect(metrics).toMatch(/service="wiki"/);
  });

  it("answers a handler's unexpected failure internal_error without its message, and logs it once with its stack, job id and request id", async () => {
    lines.length = 0;
    // Called as the gateway does while serving request req-kit-1 (request-runner.ts): the service's line names it.
    const call = runWithRequestId('req-kit-1', () => client.call('wiki', ops, 'boom', {}, { principal }));
    await expect(call).rejects.toMatchObject({
      code: 'internal_error',
      message: 'Internal error.',
      details: undefined,
    });
    const errors = lines.filter((line) => typeof line.level === 'number' && line.level >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      msg: 'bus handler threw an unexpected error',
      op: 'boom',
      jobId: expect.any(String),
      requestId: 'req-kit-1',
    });
    const error = errors[0]?.error as { stack: string };
    expect(error.stack).toContain('Error: connection string');
    expect(error.stack).toMatch(/service-host\.integration\.test\.ts/);
  });
});
