import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createLogger, createPool, migrate, ReadRouter, type Pool } from '@dagu-mcp/runtime';
import {
  startThrowawayPostgres,
  startThrowawayStandby,
  type ThrowawayPostgres,
} from '../../../../packages/runtime/test-fixtures/throwaway-postgres';
import { insertGatewayEvents } from '../audit/audit.repository';
import { GATEWAY_MIGRATIONS } from '../db/migrations';
import { buildOpenApiDocument } from '../http/openapi';
import { requestId } from '../http/request-id';
import { createRestRouter } from '../http/rest-router';
import { auditRoutes } from './audit.routes';

/**
 * `GET /api/v1/audit` served by a real streaming replica (a
 * `pg_basebackup -R` standby of a throwaway primary): with replay paused the
 * listing shows the replica's older trail until the lag bound passes, then the
 * primary's; with the standby killed it is still answered.
 */
const MAX_LAG_MS = 1500;
const logger = createLogger({ name: 'test', level: 'silent' });
let primary: ThrowawayPostgres;
let standby: ThrowawayPostgres;
let pool: Pool;
let control: Pool;
let reads: ReadRouter;
let server: Server;
let base = '';

function asAdmin(_req: Request, res: Response, next: NextFunction): void {
  res.locals.principal = { id: 'u-admin', subject: 'ada', role: 'admin', credentialType: 'api_key' };
  next();
}

beforeAll(async () => {
  primary = await startThrowawayPostgres();
  pool = createPool({ url: primary.url, schema: 'gateway', max: 4, logger });
  await migrate(pool, 'gateway', GATEWAY_MIGRATIONS, logger);
  standby = await startThrowawayStandby(primary);
  control = createPool({ url: standby.url, schema: 'public', max: 1, logger });
  reads = new ReadRouter({
    primary: pool,
    replica: createPool({ url: standby.url, schema: 'gateway', max: 2, connectTimeoutMs: 1000, logger }),
    maxLagMs: MAX_LAG_MS,
    checkMs: 50,
    logger,
  });
  const app = express();
  app.use(requestId());
  app.use(
    '/api/v1',
    createRestRouter({
      logger,
      parseJson: express.json({ limit: 1024 * 1024 }),
      authenticate: asAdmin,
      routes: [auditRoutes({ pool, reads })],
      openApi: (routes) => buildOpenApiDocument(routes, { version: 'test', basePath: '' }),
    }),
  );
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/api/v1`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await reads?.close().catch(() => undefined);
  await control?.end().catch(() => undefined);
  await pool?.end();
  await standby?.destroy();
  await primary?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function audit(action: string): Promise<void> {
  const principal = { subject: 'ada', id: 'u-admin', credentialType: 'api_key' };
  await insertGatewayEvents(pool, [
    { id: randomUUID(), at: new Date(), category: 'test', action, principal, outcome: 'succeeded' },
  ]);
}

async function listedActions(): Promise<string[]> {
  const res = await fetch(`${base}/audit?category=test`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { items: Array<{ action: string }> };
  return body.items.map((item) => item.action);
}

async function replayed(action: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await control.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM gateway.audit_events WHERE action = $1',
      [action],
    );
    if (rows[0]?.n === 1) return;
    await sleep(25);
  }
  throw new Error(`standby never replayed ${action}`);
}

it('lists the replica trail within the lag bound, the primary past it, and the primary once the replica is killed', async () => {
  await audit('first');
  await replayed('first');
  await sleep(60);
  await control.query('SELECT pg_wal_replay_pause()');
  try {
    await audit('second');
    await sleep(60);
    expect(await listedActions()).toEqual(['first']); // only the paused replica lacks "second"
    await sleep(MAX_LAG_MS + 300);
    expect(await listedActions()).toEqual(['second', 'first']);
  } finally {
    await control.query('SELECT pg_wal_replay_resume()');
  }
  await replayed('second');
  await sleep(60);
  const before = reads.served.replica;
  expect(await listedActions()).toEqual(['second', 'first']);
  expect(reads.served.replica).toBe(before + 1);
  await control.end();
  await standby.stop('immediate');
  await audit('third');
  expect(await listedActions()).toEqual(['third', 'second', 'first']);
}, 60_000);
