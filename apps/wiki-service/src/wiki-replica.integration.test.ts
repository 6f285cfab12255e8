import { randomBytes } from 'node:crypto';
import { BusClient } from '@dagu-mcp/bus';
import { DaguError, wikiOps } from '@dagu-mcp/contracts';
import { createPool, type Pool } from '@dagu-mcp/runtime';
import { loadServiceConfig, startService, type RunningService } from '@dagu-mcp/service-kit';
import {
  startThrowawayPostgres,
  startThrowawayStandby,
  type ThrowawayPostgres,
} from '../../../packages/runtime/test-fixtures/throwaway-postgres';
import { deleteKeysWithPrefix } from '../../../packages/bus/test-fixtures/bus-test-env';
import { DEVELOPER, TEST_LOGGER, TEST_REDIS_URL, VIEWER } from '../test-fixtures/wiki-test-db';
import { wikiService } from './wiki-service';

/**
 * Reads from a replica through a whole service: wiki-service started by the service host
 * with `DATABASE_URL` on a throwaway primary and `DATABASE_READ_URL` on its
 * `pg_basebackup -R` standby, called over the real bus. With replay paused,
 * the writer (the bus job's principal) reads its page at once, another caller
 * reads the replica's older state until the lag bound passes; with the
 * standby killed, every read is still answered.
 */
const prefix = `test-wiki-rr-${randomBytes(4).toString('hex')}`;
const MAX_LAG_MS = 1500;
let primary: ThrowawayPostgres;
let standby: ThrowawayPostgres;
let service: RunningService;
let client: BusClient;
let control: Pool;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  primary = await startThrowawayPostgres();
  standby = await startThrowawayStandby(primary);
  const config = loadServiceConfig(
    { schema: 'wiki_service', opsPort: 0 },
    {
      DATABASE_URL: primary.url,
      DATABASE_READ_URL: standby.url,
      DB_READ_MAX_LAG_MS: String(MAX_LAG_MS),
      DB_READ_CHECK_MS: '50',
      REDIS_URL: TEST_REDIS_URL,
      BUS_PREFIX: prefix,
      OPS_PORT: '0',
      AUDIT_DRAIN_MS: '0',
    },
  );
  service = await startService(wikiService, config, TEST_LOGGER);
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  await client.start();
  control = createPool({ url: standby.url, schema: 'public', max: 1, logger: TEST_LOGGER });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await service?.stop();
  await control?.end().catch(() => undefined);
  await standby?.destroy();
  await primary?.destroy();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

async function getPage(principal: typeof VIEWER, path: string): Promise<string> {
  try {
    const page = await client.call('wiki', wikiOps, 'wiki.get', { workspace: 'team', path }, { principal });
    return page.content;
  } catch (err) {
    if (err instanceof DaguError && err.code === 'resource_not_found') return 'not found';
    throw err;
  }
}

async function putPage(path: string, content: string): Promise<void> {
  await client.call('wiki', wikiOps, 'wiki.put', { workspace: 'team', path, content }, { principal: DEVELOPER });
}

/** Until the standby has replayed `path`'s latest content (`expected`), as a read of anyone would see it. */
async function replayed(path: string, expected: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await getPage(VIEWER, path)) === expected) return;
    await sleep(25);
  }
  throw new Error(`standby never showed ${path}`);
}

it('a writer reads its own change at once while replay is paused; others see the replica until the lag bound', async () => {
  await putPage('notes', 'v1\n');
  await replayed('notes', 'v1\n');
  await putPage('fresh', 'recent commit\n'); // a recent last-replayed commit: the replica is within the bound
  await replayed('fresh', 'recent commit\n');
  await control.query('SELECT pg_wal_replay_pause()');
  try {
    await putPage('notes', 'v2\n');
    expect(await getPage(DEVELOPER, 'notes')).toBe('v2\n'); // its own write: from the primary
    expect(await getPage(VIEWER, 'notes')).toBe('v1\n'); // only the paused replica still says v1
    // A page the replica has not seen yet is never reported missing: absence is the primary's word.
    await putPage('born-while-paused', 'new\n');
    expect(await getPage(VIEWER, 'born-while-paused')).toBe('new\n');
    await sleep(MAX_LAG_MS + 300);
    expect(await getPage(VIEWER, 'notes')).toBe('v2\n'); // past the bound: the primary
  } finally {
    await control.query('SELECT pg_wal_replay_resume()');
  }
  // The service's metric counts the reads each server answered.
  const metrics = await (await fetch(`http://127.0.0.1:${service.opsPort}/metrics`)).text();
  const served = (source: string) =>
    Number(new RegExp(`^dagu_db_reads_total\\{[^}]*source="${source}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1]);
  expect(served('replica')).toBeGreaterThan(0);
  expect(served('primary')).toBeGreaterThan(0);
}, 60_000);

it('keeps answering reads, writes included, once the replica is killed', async () => {
  await control.end();
  await standby.stop('immediate');
  const started = Date.now();
  await putPage('after-kill', 'still here\n');
  expect(await getPage(VIEWER, 'after-kill')).toBe('still here\n');
  expect(await getPage(DEVELOPER, 'notes')).toBe('v2\n');
  const list = await client.call(
    'wiki',
    wikiOps,
    'wiki.list',
    { workspace: 'team', flat: true },
    { principal: VIEWER },
  );
  expect(JSON.stringify(list)).toContain('after-kill');
  expect(Date.now() - started).toBeLessThan(5000);
}, 30_000);
