import { captureLogs } from '../../test-fixtures/log-capture';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../../test-fixtures/throwaway-postgres';
import { createPool, withTransaction, type Pool } from './pool';
import { isTransientPgFailure } from './pg-errors';

/**
 * A fast PostgreSQL shutdown under write load must not crash
 * the process. pg emits `'error'` on every client whose connection ends
 * unexpectedly, checked out or not; pool.on('error') covers idle clients only,
 * so a checked-out client (a transaction in progress, a query in flight) had
 * no listener and the event became an uncaught exception. Runs its own
 * PostgreSQL (never the machine's) and stops it mid-load.
 */
let pg: ThrowawayPostgres;
let pool: Pool;
const logs = captureLogs('warn');
const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => {
  uncaught.push(err);
};

beforeAll(async () => {
  pg = await startThrowawayPostgres();
  pool = createPool({ url: pg.url, schema: 'public', max: 8, logger: logs.logger });
  await pool.query('CREATE TABLE writes (id serial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  process.on('uncaughtException', onUncaught);
}, 60_000);

afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  await pool.end().catch(() => undefined);
  await pg.destroy();
});

/** Writers that keep inserting until told to stop: single statements and transactions held across a pause. */
function writeLoad(stopped: () => boolean): { done: Promise<void>; failures: unknown[]; ok: () => number } {
  const failures: unknown[] = [];
  let ok = 0;
  const writer = async (held: boolean): Promise<void> => {
    while (!stopped()) {
      try {
        if (held)
          await withTransaction(pool, async (client) => {
            await client.query('INSERT INTO writes DEFAULT VALUES');
            // The client is checked out and idle here, the moment that crashed.
            await new Promise((r) => setTimeout(r, 20));
            await client.query('INSERT INTO writes DEFAULT VALUES');
          });
        else await pool.query('INSERT INTO writes DEFAULT VALUES');
        ok++;
      } catch (err) {
        failures.push(err);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const done = Promise.all([false, false, true, true, true, true].map(writer)).then(() => undefined);
  return { done, failures, ok: () => ok };
}

it('survives a fast shutdown under write load and writes again once PostgreSQL is back', async () => {
  let stop = false;
  const load = writeLoad(() => stop);
  await new Promise((r) => setTimeout(r, 300));
  expect(load.ok()).toBeGreaterThan(0);
  await pg.stop('fast');
  await new Promise((r) => setTimeout(r, 1000));
  await pg.start();
  const before = load.ok();
  const until = Date.now() + 15_000;
  while (load.ok() === before && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  stop = true;
  await load.done;

  expect(uncaught).toEqual([]);
  expect(load.ok()).toBeGreaterThan(before); // writes flow again after the restart
  expect(load.failures.length).toBeGreaterThan(0); // the outage was seen by the writers
  // Every failure is one the callers can classify as an outage (and retry).
  expect(load.failures.filter((e) => !isTransientPgFailure(e))).toEqual([]);
  expect(logs.lines.some((l) => l.msg === 'PostgreSQL client failed')).toBe(true);
}, 60_000);
