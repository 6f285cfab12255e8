import { randomBytes } from 'node:crypto';
import { BusClient } from '@dagu-mcp/bus';
import { dagOps, type Principal } from '@dagu-mcp/contracts';
import { createLogger, createPool, type Pool } from '@dagu-mcp/runtime';
import { loadServiceConfig, startService, type RunningService } from '@dagu-mcp/service-kit';
import {
  startThrowawayPostgres,
  startThrowawayStandby,
  type ThrowawayPostgres,
} from '../../../packages/runtime/test-fixtures/throwaway-postgres';
import { deleteKeysWithPrefix, TEST_REDIS_URL } from '../test-fixtures/bus-test-env';
import { dagYaml } from '../test-fixtures/handler-context';
import { loadDagConfig } from './config/dag-config';
import { createDagService } from './dag-service';

/**
 * DAG reads on a replica (docs/deployment.md "Read replica"), through the whole service:
 * dag-service started by the service host with `DATABASE_URL` on a throwaway primary and
 * `DATABASE_READ_URL` on its `pg_basebackup -R` standby, no caches
 * (`DAG_SPEC_CACHE_MS=0`: a cached page is filled from the primary only), called over the
 * real bus. With replay paused, the author's search and list see its change at once while
 * another caller sees the replica's older state until the lag bound passes; with the
 * standby killed, every read is still answered.
 */
const prefix = `test-dag-rr-${randomBytes(4).toString('hex')}`;
const MAX_LAG_MS = 1500;
const LOGGER = createLogger({ name: 'dag-replica-test', level: 'silent' });
const AUTHOR: Principal = { id: 'u-dev', subject: 'dana', role: 'developer', credentialType: 'api_key' };
const READER: Principal = { id: 'u-view', subject: 'vic', role: 'viewer', credentialType: 'api_key' };
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
    { schema: 'dag_service', opsPort: 0 },
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
  service = await startService(
    createDagService({ dagConfig: loadDagConfig({ DAG_SPEC_CACHE_MS: '0' }) }),
    config,
    LOGGER,
  );
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  await client.start();
  control = createPool({ url: standby.url, schema: 'public', max: 1, logger: LOGGER });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await service?.stop();
  await control?.end().catch(() => undefined);
  await standby?.destroy();
  await primary?.destroy();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

const upsert = (name: string, marker: string) =>
  client.call(
    'dag',
    dagOps,
    'dag.upsert',
    { name, spec: dagYaml({ commands: [`echo ${marker}`] }) },
    { principal: AUTHOR },
  );

/** The DAGs whose text holds `marker`, as `principal` finds them. */
async function found(principal: Principal, marker: string): Promise<string[]> {
  const reply = await client.call('dag', dagOps, 'dag.search', { search: marker }, { principal });
  return reply.results.map((result) => result.name);
}

async function listed(principal: Principal): Promise<string[]> {
  const reply = await client.call('dag', dagOps, 'dag.list', {}, { principal });
  return reply.items.map((item) => item.name);
}

/** Until a reader finds `marker` (the standby has replayed it). */
async function replayed(marker: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await found(READER, marker)).length > 0) return;
    await sleep(25);
  }
  throw new Error(`standby never showed ${marker}`);
}

it('the author finds its own change at once while replay is paused; others see the replica until the lag bound', async () => {
  await upsert('etl', 'first-marker');
  await replayed('first-marker');
  await upsert('fresh', 'recent-commit'); // a recent last-replayed commit: the replica is within the bound
  await replayed('recent-commit');
  await control.query('SELECT pg_wal_replay_pause()');
  try {
    await upsert('etl', 'second-marker');
    await upsert('born-while-paused', 'third-marker');
    expect(await found(AUTHOR, 'second-marker')).toEqual(['etl']); // its own write: from the primary
    expect(await listed(AUTHOR)).toContain('born-while-paused');
    expect(await found(READER, 'second-marker')).toEqual([]); // only the paused replica still holds first-marker
    expect(await listed(READER)).not.toContain('born-while-paused');
    await sleep(MAX_LAG_MS + 300);
    expect(await found(READER, 'second-marker')).toEqual(['etl']); // past the bound: the primary
    expect(await listed(READER)).toContain('born-while-paused');
  } finally {
    await control.query('SELECT pg_wal_replay_resume()');
  }
  const metrics = await (await fetch(`http://127.0.0.1:${service.opsPort}/metrics`)).text();
  const served = (source: string) =>
    Number(new RegExp(`^dagu_db_reads_total\\{[^}]*source="${source}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1]);
  expect(served('replica')).toBeGreaterThan(0);
  expect(served('primary')).toBeGreaterThan(0);
}, 60_000);

it('keeps answering searches and lists once the replica is killed', async () => {
  await control.end();
  await standby.stop('immediate');
  const started = Date.now();
  await upsert('after-kill', 'fourth-marker');
  expect(await found(READER, 'fourth-marker')).toEqual(['after-kill']);
  expect(await listed(READER)).toEqual(expect.arrayContaining(['etl', 'after-kill']));
  expect(Date.now() - started).toBeLessThan(5000);
}, 30_000);
