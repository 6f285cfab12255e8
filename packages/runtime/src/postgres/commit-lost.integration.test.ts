import { randomBytes } from 'node:crypto';
import { DaguError } from '@dagu-mcp/contracts';
import { createLogger } from '../logging/logger';
import { CuttingProxy } from '../../test-fixtures/cutting-proxy';
import { createPool, withTransaction, type Pool } from './pool';

/**
 * A COMMIT whose answer is lost: the connection dies after the
 * COMMIT reached PostgreSQL and before its answer came back. The change may
 * well be committed, so the caller must not hear "unavailable, not applied"
 * but `resource_unavailable` with `details.outcome: "unknown"`. The machine's
 * PostgreSQL is reached through a proxy that cuts that one connection; it is
 * never stopped.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const logger = createLogger({ name: 'commit-lost-test', level: 'silent' });
const schema = `commit_lost_${randomBytes(4).toString('hex')}`;
const upstream = new URL(DATABASE_URL);
const proxy = new CuttingProxy(upstream.hostname, Number(upstream.port || 5432));
let direct: Pool;
let proxied: Pool;

beforeAll(async () => {
  direct = createPool({ url: DATABASE_URL, schema, max: 1, logger });
  await direct.query(`CREATE SCHEMA "${schema}"`);
  await direct.query(`CREATE TABLE "${schema}".changes (id int PRIMARY KEY)`);
  const address = await proxy.start();
  const url = new URL(DATABASE_URL);
  url.host = address;
  proxied = createPool({ url: url.toString(), schema, max: 1, logger });
});

afterAll(async () => {
  await proxied?.end().catch(() => undefined);
  await direct?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await direct?.end();
  await proxy.stop();
});

test('a COMMIT that reached PostgreSQL but lost its answer is "outcome unknown", and it did commit', async () => {
  proxy.cutAfter('COMMIT');
  const failure = await withTransaction(proxied, async (client) => {
    await client.query(`INSERT INTO "${schema}".changes (id) VALUES (1)`);
  }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(proxy.cuts).toBe(1);
  expect(failure).toBeInstanceOf(DaguError);
  expect(failure).toMatchObject({
    code: 'resource_unavailable',
    details: { outcome: 'unknown', dependency: 'postgresql' },
  });
  // What "unknown" stands for: here the change is in (PostgreSQL ran the COMMIT it was sent).
  const until = Date.now() + 5000;
  while ((await direct.query(`SELECT 1 FROM "${schema}".changes WHERE id = 1`)).rowCount !== 1) {
    if (Date.now() > until) throw new Error('the COMMIT did not land');
    await new Promise((r) => setTimeout(r, 100));
  }
});

test('a transaction whose connection dies before its COMMIT is a plain outage: it did not commit', async () => {
  proxy.cutAfter('VALUES (2)');
  const failure = await withTransaction(proxied, async (client) => {
    await client.query(`INSERT INTO "${schema}".changes (id) VALUES (2)`);
  }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).not.toBeInstanceOf(DaguError);
  expect((await direct.query(`SELECT 1 FROM "${schema}".changes WHERE id = 2`)).rowCount).toBe(0);
});
