import { BusClient, ServiceWorker, SILENT_LOGGER, type BusLogger } from '@dagu-mcp/bus';
import { dagOps } from '@dagu-mcp/contracts';
import { Redis } from 'ioredis';
import { createDagHandlers } from '../dag-service';
import { createTestSchema, type TestSchema } from '../../test-fixtures/pg-test-schema';
import { dagYaml, TEST_PRINCIPAL, withHandlerContext } from '../../test-fixtures/handler-context';
import { deleteKeysWithPrefix, errorOf, randomBusPrefix, TEST_REDIS_URL } from '../../test-fixtures/bus-test-env';
import { waitFor } from '../../../../packages/bus/test-fixtures/bus-test-env';
import { DagChangeChannel, DagSpecCache } from '@dagu-mcp/service-kit';
import { DagListCache } from './dag-list-cache';

/**
 * The `dag.spec` cache and the `dag.list` page cache that follows it, with two dag-service replicas sharing one PostgreSQL
 * schema and one Redis (docs/decisions.md "DAG spec cache"). Each replica is
 * a real ServiceWorker with its own cache and change channel; each has a bus
 * prefix of its own so the test chooses which replica answers, while both
 * share one change channel. A change applied on A is seen by the very next
 * read on B; repeated reads on B are served from its cache.
 */
const options = { principal: TEST_PRINCIPAL };
const changes = randomBusPrefix('dag-changes');
const TTL_MS = 60_000;
let db: TestSchema;

interface Replica {
  readonly cache: DagSpecCache;
  readonly list: DagListCache;
  readonly channel: DagChangeChannel;
  readonly worker: ServiceWorker<typeof dagOps>;
  readonly client: BusClient;
  readonly prefix: string;
  /** Added to `Date.now()` by the cache's clock: moves this replica past the TTL. */
  readonly skew: { ms: number };
}
let a: Replica;
let b: Replica;

async function startReplica(label: string): Promise<Replica> {
  const prefix = randomBusPrefix(`dag-cache-${label}`);
  const skew = { ms: 0 };
  const cache = new DagSpecCache({ ttlMs: TTL_MS, now: () => Date.now() + skew.ms });
  const list = new DagListCache(cache, TTL_MS, 2000, () => Date.now() + skew.ms);
  const channel = new DagChangeChannel({
    redisUrl: TEST_REDIS_URL,
    prefix: changes,
    replica: label,
    cache,
    logger: SILENT_LOGGER,
  });
  const handlers = createDagHandlers(
    { pool: db.pool, replica: label },
    { specCache: cache, listCache: list, announceChange: (name) => channel.publish(name) },
  );
  const worker = new ServiceWorker({ service: 'dag', catalog: dagOps, handlers, redisUrl: TEST_REDIS_URL, prefix });
  const client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  await Promise.all([worker.start(), client.start()]);
  await waitFor(() => cache.stats().live, 5000, `replica ${label} subscribed`);
  return { cache, list, channel, worker, client, prefix, skew };
}

async function stopReplica(replica: Replica): Promise<void> {
  await replica.client.close();
  await replica.worker.close();
  await replica.channel.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, replica.prefix);
}

const upsert = (on: Replica, name: string, spec: string) =>
  on.client.call('dag', dagOps, 'dag.upsert', { name, spec }, options);
const readSpec = async (on: Replica, name: string): Promise<string> =>
  (await on.client.call('dag', dagOps, 'dag.spec', { name }, options)).spec;

beforeAll(async () => {
  db = await createTestSchema('spec_cache');
  a = await startReplica('a');
  b = await startReplica('b');
});

afterAll(async () => {
  await Promise.all([a, b].filter((replica) => replica !== undefined).map(stopReplica));
  await db.drop();
});

describe('dag.spec cache across two replicas', () => {
  it('serves a repeated read on B from its cache, and an update on A is seen by the next read on B', async () => {
    const v1 = dagYaml({ description: 'v1' });
    const v2 = dagYaml({ description: 'v2' });
    await upsert(a, 'shared', v1);
    expect(await readSpec(b, 'shared')).toBe(v1);
    const before = b.cache.stats();
    expect(await readSpec(b, 'shared')).toBe(v1);
    expect(b.cache.stats().hits).toBe(before.hits + 1);

    await upsert(a, 'shared', v2);
    expect(await readSpec(b, 'shared')).toBe(v2);
    for (let round = 3; round <= 6; round++) {
      const spec = dagYaml({ description: `v${round}` });
      await upsert(a, 'shared', spec);
      expect(await readSpec(b, 'shared')).toBe(spec);
    }
  });

  it('a delete on A makes B answer resource_not_found, and a re-create is seen at once', async () => {
    const spec = dagYaml({ description: 'to delete' });
    await upsert(a, 'doomed', spec);
    await readSpec(b, 'doomed');
    expect(await readSpec(b, 'doomed')).toBe(spec);
    await a.client.call('dag', dagOps, 'dag.delete', { name: 'doomed' }, options);
    expect(await errorOf(readSpec(b, 'doomed'))).toMatchObject({ code: 'resource_not_found' });
    const again = dagYaml({ description: 'back' });
    await upsert(a, 'doomed', again);
    expect(await readSpec(b, 'doomed')).toBe(again);
  });

  it('a suspend on A drops the entry on B', async () => {
    await upsert(a, 'pausable', dagYaml());
    await readSpec(b, 'pausable');
    await readSpec(b, 'pausable');
    const before = b.cache.stats();
    await a.client.call('dag', dagOps, 'dag.setSuspended', { name: 'pausable', suspended: true }, options);
    await readSpec(b, 'pausable');
    expect(b.cache.stats().misses).toBe(before.misses + 1);
  });

  it('does not see a direct SQL write until the TTL has passed (SQL writes bypass invalidation)', async () => {
    const spec = dagYaml({ description: 'through the service' });
    await upsert(a, 'raw', spec);
    expect(await readSpec(b, 'raw')).toBe(spec);
    await db.pool.query('UPDATE dags SET spec = $1 WHERE name = $2', ['steps: []\n', 'raw']);
    expect(await readSpec(b, 'raw')).toBe(spec);
    expect(await readSpec(a, 'raw')).toBe('steps: []\n');
    b.skew.ms = TTL_MS;
    try {
      expect(await readSpec(b, 'raw')).toBe('steps: []\n');
    } finally {
      b.skew.ms = 0;
    }
  });

  it('empties and bypasses the cache while the change subscription is down, and uses it again once re-subscribed', async () => {
    const spec = dagYaml({ description: 'before the loss' });
    await upsert(a, 'flaky', spec);
    await readSpec(b, 'flaky');
    expect(await readSpec(b, 'flaky')).toBe(spec);
    // A change this replica never hears of (as one published while its subscriber is away).
    await db.pool.query('UPDATE dags SET spec = $1 WHERE name = $2', ['steps: []\n', 'flaky']);
    await killConnection(`${changes}:dag-changes:sub:b`, b);
    expect(await readSpec(b, 'flaky')).toBe('steps: []\n');
    await waitFor(() => b.cache.stats().live, 5000, 'B subscribed again');
    await readSpec(b, 'flaky');
    const before = b.cache.stats();
    expect(await readSpec(b, 'flaky')).toBe('steps: []\n');
    expect(b.cache.stats().hits).toBe(before.hits + 1);
  });

  it('still applies a change when the announcement cannot be published, and logs a warning', async () => {
    const warnings: string[] = [];
    const logger: BusLogger = { ...SILENT_LOGGER, warn: (_fields, message) => warnings.push(message) };
    const channel = new DagChangeChannel({
      redisUrl: 'redis://127.0.0.1:1',
      prefix: changes,
      replica: 'offline',
      logger,
    });
    try {
      const handlers = createDagHandlers(
        { pool: db.pool, replica: 'offline' },
        { announceChange: (name) => channel.publish(name) },
      );
      const reply = await withHandlerContext((ctx) =>
        handlers['dag.upsert']({ name: 'unannounced', spec: dagYaml() }, ctx),
      );
      expect(reply).toMatchObject({ applied: true, created: true });
      expect(warnings).toEqual(['dag changes: change not announced']);
    } finally {
      await channel.close();
    }
  });
});

describe('dag.list page cache across two replicas', () => {
  const page = async (on: Replica, request: Record<string, unknown> = {}) =>
    on.client.call('dag', dagOps, 'dag.list', { name: 'lc-', perPage: 50, ...request }, options);
  const names = (reply: { items: Array<{ name: string }> }) => reply.items.map((item) => item.name);

  it('serves a repeated page on B from its cache; creates, suspends, renames and deletes on A show on B at once', async () => {
    await upsert(a, 'lc-one', dagYaml());
    expect(names(await page(b))).toEqual(['lc-one']);
    const before = b.list.stats();
    expect(names(await page(b))).toEqual(['lc-one']);
    expect(b.list.stats().hits).toBe(before.hits + 1);

    await upsert(a, 'lc-two', dagYaml());
    expect(await page(b)).toMatchObject({ pagination: { total: 2 } });
    await a.client.call('dag', dagOps, 'dag.setSuspended', { name: 'lc-two', suspended: true }, options);
    expect((await page(b)).items.find((item) => item.name === 'lc-two')).toMatchObject({ suspended: true });
    await a.client.call('dag', dagOps, 'dag.rename', { name: 'lc-two', newName: 'lc-three' }, options);
    expect(names(await page(b))).toEqual(['lc-one', 'lc-three']);
    await a.client.call('dag', dagOps, 'dag.delete', { name: 'lc-one' }, options);
    expect(names(await page(b))).toEqual(['lc-three']);
  });

  it('keys pages by every query parameter, and does not cache pages sorted by next run', async () => {
    await upsert(a, 'lc-key-a', dagYaml());
    await upsert(a, 'lc-key-b', dagYaml());
    expect(names(await page(b, { name: 'lc-key', perPage: 1 }))).toEqual(['lc-key-a']);
    expect(names(await page(b, { name: 'lc-key', perPage: 1, page: 2 }))).toEqual(['lc-key-b']);
    expect(names(await page(b, { name: 'lc-key', order: 'desc' }))).toEqual(['lc-key-b', 'lc-key-a']);
    const before = b.list.stats();
    await page(b, { name: 'lc-key', sort: 'nextRun' });
    await page(b, { name: 'lc-key', sort: 'nextRun' });
    expect(b.list.stats().hits).toBe(before.hits);
  });

  it('dag.listIfChanged: a tag from A is current on B until a change on A, then B sends the new page', async () => {
    const tagged = async (on: Replica, ifNoneMatch?: string, request: Record<string, unknown> = {}) =>
      on.client.call(
        'dag',
        dagOps,
        'dag.listIfChanged',
        { name: 'lc-tag-', perPage: 50, ...request, ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }) },
        options,
      );
    await upsert(a, 'lc-tag-a', dagYaml());
    const first = await tagged(a);
    expect(names(first.page!)).toEqual(['lc-tag-a']);
    expect(first.page).toEqual(await page(a, { name: 'lc-tag-' }));
    // The tag is the page's content: B, with its own cache (or a miss), recognises A's tag.
    expect(await tagged(b, first.etag)).toEqual({ etag: first.etag });
    expect(await tagged(b, first.etag)).toEqual({ etag: first.etag });
    // Another tag, or another query, gets the page.
    expect((await tagged(b, 'not-the-tag')).page).toEqual(first.page);
    expect((await tagged(b, first.etag, { order: 'desc', perPage: 1 })).page).toBeDefined();
    // Uncached orders are tagged the same way.
    const byNextRun = await tagged(b, undefined, { sort: 'nextRun' });
    expect(await tagged(a, byNextRun.etag, { sort: 'nextRun' })).toEqual({ etag: byNextRun.etag });

    await upsert(a, 'lc-tag-b', dagYaml());
    const after = await tagged(b, first.etag);
    expect(after.etag).not.toBe(first.etag);
    expect(names(after.page!)).toEqual(['lc-tag-a', 'lc-tag-b']);
    await a.client.call('dag', dagOps, 'dag.setSuspended', { name: 'lc-tag-b', suspended: true }, options);
    const suspended = await tagged(b, after.etag);
    expect(suspended.page?.items[1]).toMatchObject({ name: 'lc-tag-b', suspended: true });
  });

  it('reads that miss together share one query; a page read near its TTL end is fetched again ahead of it', async () => {
    await upsert(a, 'lc-flight', dagYaml());
    const before = b.list.stats();
    const pages = await Promise.all(Array.from({ length: 5 }, () => page(b, { name: 'lc-flight' })));
    expect(pages.map(names)).toEqual(Array.from({ length: 5 }, () => ['lc-flight']));
    expect(b.list.stats().stored).toBe(before.stored + 1);

    // In the last second of the TTL a hit also fetches the page again, in the background.
    b.skew.ms = TTL_MS - 500;
    try {
      const stored = b.list.stats().stored;
      expect(names(await page(b, { name: 'lc-flight' }))).toEqual(['lc-flight']);
      await waitFor(() => b.list.stats().stored === stored + 1, 5000, 'the page fetched ahead of its TTL end');
      // Past the first TTL: the refreshed copy still answers.
      b.skew.ms = TTL_MS + 500;
      const hits = b.list.stats().hits;
      await page(b, { name: 'lc-flight' });
      expect(b.list.stats().hits).toBe(hits + 1);
    } finally {
      b.skew.ms = 0;
    }
  });

  it('while the cache is off (its change subscription down) every page read queries for itself, shared by none', async () => {
    const spec = new DagSpecCache({ ttlMs: TTL_MS });
    spec.setLive(false);
    const list = new DagListCache(spec, TTL_MS);
    const handlers = createDagHandlers({ pool: db.pool, replica: 'off' }, { specCache: spec, listCache: list });
    await upsert(a, 'lc-off', dagYaml());
    const replies = await Promise.all(
      [1, 2, 3].map(() =>
        withHandlerContext((ctx) => handlers['dag.listIfChanged']({ name: 'lc-off', perPage: 50 }, ctx)),
      ),
    );
    expect(replies.map((r) => names(r.page!))).toEqual([['lc-off'], ['lc-off'], ['lc-off']]);
    expect(new Set(replies.map((r) => r.etag)).size).toBe(1);
    // Even a matching tag is checked against a fresh query (the page is left out, nothing is kept).
    const again = await withHandlerContext((ctx) =>
      handlers['dag.listIfChanged']({ name: 'lc-off', perPage: 50, ifNoneMatch: replies[0]!.etag }, ctx),
    );
    expect(again).toEqual({ etag: replies[0]!.etag });
    expect(list.stats()).toMatchObject({ hits: 0, stored: 0, entries: 0 });
  });

  it('drops a page once the earliest next run it shows has passed', async () => {
    await upsert(a, 'lc-cron', dagYaml({ schedule: ['* * * * *'] }));
    const first = await page(b, { name: 'lc-cron' });
    const nextRun = Date.parse(first.items[0]?.nextRun ?? '');
    expect(Number.isFinite(nextRun)).toBe(true);
    const before = b.list.stats();
    await page(b, { name: 'lc-cron' });
    expect(b.list.stats().hits).toBe(before.hits + 1);
    b.skew.ms = nextRun - Date.now() + 1;
    try {
      await page(b, { name: 'lc-cron' });
      expect(b.list.stats().misses).toBe(before.misses + 1);
    } finally {
      b.skew.ms = 0;
    }
  });
});

/**
 * Kills the Redis connection of `replica` named `name` (CLIENT KILL ID: only
 * this test's connection, never another test's) and waits until the replica
 * has noticed (its cache was switched off; it may already be back on).
 */
async function killConnection(name: string, replica: Replica): Promise<void> {
  const outages = replica.cache.stats().outages;
  const admin = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const list = String(await admin.call('CLIENT', 'LIST'));
    const line = list.split('\n').find((entry) => entry.includes(` name=${name} `));
    const id = line === undefined ? undefined : /(?:^|\s)id=(\d+)/.exec(line)?.[1];
    if (id === undefined) throw new Error(`no Redis connection named ${name}`);
    await admin.call('CLIENT', 'KILL', 'ID', id);
  } finally {
    admin.disconnect();
  }
  await waitFor(() => replica.cache.stats().outages > outages, 5000, 'the replica to notice the lost subscription');
}
