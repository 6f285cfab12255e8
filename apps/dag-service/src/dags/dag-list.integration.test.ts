import { createTestSchema, type TestSchema } from '../../test-fixtures/pg-test-schema';
import { dagYaml } from '../../test-fixtures/handler-context';
import { DagCatalog } from './dag.catalog';
import { DagRepository } from './dag.repository';
import { NextRunCalculator } from './next-run';

/**
 * The DAG collection (spec 021 `dags`: `page`, `perPage`, `name`, `labels`,
 * `sort`, `order`, `pagination`) against the real PostgreSQL, with a fixed
 * clock so next runs are known.
 */
const NOW = new Date('2030-01-01T10:30:00.000Z');
let db: TestSchema;
let catalog: DagCatalog;

/** name → extras of its YAML. */
const SEED: Record<string, Parameters<typeof dagYaml>[0]> = {
  'alpha-etl': { labels: ['team=data', 'env=prod'], schedule: ['CRON_TZ=UTC 0 11 * * *'], description: 'Alpha' },
  'beta-report': { labels: ['team=data'], schedule: ['CRON_TZ=UTC */5 * * * *'] },
  gamma_sync: { labels: ['team=ops', 'env=prod'], schedule: ['CRON_TZ=UTC 0 0 * * *'] },
  'delta-REPORT': { labels: ['team=ops'] },
  epsilon: { schedule: ['CRON_TZ=UTC 0 11 * * *'] },
  'zeta-paused': { schedule: ['CRON_TZ=UTC * * * * *'] },
  eta: {},
};
const ALL_NAMES = Object.keys(SEED).sort();

beforeAll(async () => {
  db = await createTestSchema('list');
  catalog = new DagCatalog(new DagRepository(db.pool), new NextRunCalculator(), () => NOW);
  for (const [name, extras] of Object.entries(SEED)) {
    await catalog.upsert({ name, spec: dagYaml(extras) }, Date.now() + 5000);
  }
  await db.pool.query("UPDATE dags SET suspended = true WHERE name = 'zeta-paused'");
});

afterAll(async () => {
  await db.drop();
});

const namesOf = (reply: { items: { name: string }[] }): string[] => reply.items.map((item) => item.name);

describe('dag.list', () => {
  it('defaults to page 1 of 50 by name ascending, with the collection model of 021', async () => {
    const reply = await catalog.list({});
    expect(namesOf(reply)).toEqual(ALL_NAMES);
    expect(reply.pagination).toEqual({ page: 1, perPage: 50, total: 7, totalPages: 1 });
    expect(reply.items.find((item) => item.name === 'alpha-etl')).toEqual({
      name: 'alpha-etl',
      uri: 'dagu://dags/alpha-etl/spec',
      suspended: false,
      description: 'Alpha',
      labels: ['team=data', 'env=prod'],
      schedule: ['CRON_TZ=UTC 0 11 * * *'],
      nextRun: '2030-01-01T11:00:00.000Z',
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const eta = reply.items.find((item) => item.name === 'eta');
    expect(eta).not.toHaveProperty('nextRun');
    expect(eta).not.toHaveProperty('description');
  });

  it('pages with perPage and reports total and totalPages; a page past the end is empty', async () => {
    const pages = await Promise.all([1, 2, 3, 4].map((page) => catalog.list({ page, perPage: 3 })));
    expect(pages.map(namesOf)).toEqual([ALL_NAMES.slice(0, 3), ALL_NAMES.slice(3, 6), ALL_NAMES.slice(6), []]);
    expect(pages[3]?.pagination).toEqual({ page: 4, perPage: 3, total: 7, totalPages: 3 });
  });

  it('orders by name descending, and pages that order', async () => {
    const descending = [...ALL_NAMES].reverse();
    expect(namesOf(await catalog.list({ order: 'desc' }))).toEqual(descending);
    const pages = await Promise.all([1, 2, 3].map((page) => catalog.list({ order: 'desc', page, perPage: 3 })));
    expect(pages.map(namesOf)).toEqual([descending.slice(0, 3), descending.slice(3, 6), descending.slice(6)]);
  });

  it('filters by a case-insensitive name substring, with LIKE wildcards taken literally', async () => {
    expect(namesOf(await catalog.list({ name: 'RePoRt' }))).toEqual(['beta-report', 'delta-REPORT']);
    expect(namesOf(await catalog.list({ name: '_' }))).toEqual(['gamma_sync']);
    expect(namesOf(await catalog.list({ name: '%' }))).toEqual([]);
  });

  it('filters by labels, all of them', async () => {
    expect(namesOf(await catalog.list({ labels: ['team=data'] }))).toEqual(['alpha-etl', 'beta-report']);
    expect(namesOf(await catalog.list({ labels: ['env=prod', 'team=ops'] }))).toEqual(['gamma_sync']);
    const combined = await catalog.list({ labels: ['team=data'], name: 'beta', perPage: 1 });
    expect(namesOf(combined)).toEqual(['beta-report']);
    expect(combined.pagination.total).toBe(1);
  });

  it('sorts by next run: earliest first, ties by name, unscheduled and suspended DAGs last', async () => {
    const reply = await catalog.list({ sort: 'nextRun' });
    expect(namesOf(reply)).toEqual([
      'beta-report',
      'alpha-etl',
      'epsilon',
      'gamma_sync',
      'delta-REPORT',
      'eta',
      'zeta-paused',
    ]);
    expect(reply.items.map((item) => item.nextRun)).toEqual([
      '2030-01-01T10:35:00.000Z',
      '2030-01-01T11:00:00.000Z',
      '2030-01-01T11:00:00.000Z',
      '2030-01-02T00:00:00.000Z',
      undefined,
      undefined,
      undefined,
    ]);
    expect(reply.items.find((item) => item.name === 'zeta-paused')?.suspended).toBe(true);
  });

  it('sorts by next run descending and pages that order', async () => {
    const desc = await catalog.list({ sort: 'nextRun', order: 'desc', perPage: 3, page: 1 });
    expect(namesOf(desc)).toEqual(['gamma_sync', 'epsilon', 'alpha-etl']);
    const next = await catalog.list({ sort: 'nextRun', order: 'desc', perPage: 3, page: 2 });
    expect(namesOf(next)).toEqual(['beta-report', 'zeta-paused', 'eta']);
    expect(next.pagination).toEqual({ page: 2, perPage: 3, total: 7, totalPages: 3 });
  });

  it('sorts by next run within the filters', async () => {
    expect(namesOf(await catalog.list({ sort: 'nextRun', labels: ['env=prod'] }))).toEqual(['alpha-etl', 'gamma_sync']);
  });
});
