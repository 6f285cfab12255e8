/**
 * dag-service search and list latency over 10,000 stored DAGs (target:
 * `dag.search` p50 < 100 ms).
 *
 * Run from the repo root (PostgreSQL up; no build needed, SWC compiles on the fly):
 *   node apps/dag-service/bench/dag-search.run.js [--n 10000] [--iterations 200] [--db URL]
 * or `npx -y pnpm@10.34.9 --filter @dagu-mcp/dag-service bench`.
 *
 * Seeds `n` realistic DAG YAMLs (validated and stored through `DagCatalog.upsert`,
 * as `dag.upsert` does) into a throwaway schema `bench_dag_<hex>` of the given
 * database, runs ANALYZE, then times each scenario `iterations` times after
 * 10 % untimed warm-up calls, and prints p50 / p99 / max in ms. Timed: the
 * domain call of the op (SQL + snippets/next runs + reply mapping), without
 * the bus (bench/bus-roundtrip.ts measures that). The schema is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { createLogger, createPool, migrate, type Pool } from '@dagu-mcp/runtime';
import { DagCatalog } from '../src/dags/dag.catalog';
import { DagRepository } from '../src/dags/dag.repository';
import { DAG_MIGRATIONS } from '../src/db/migrations';
import { seedDags } from './dag-seed';

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const COUNT = Number(argument('n', '10000'));
const ITERATIONS = Number(argument('iterations', '200'));
const DATABASE_URL = argument('db', 'postgres://postgres@127.0.0.1:5432/test');

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Times `fn` and prints one result line; returns the p50 in ms. */
async function measure(label: string, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.ceil(ITERATIONS / 10); i += 1) await fn();
  const samples: number[] = [];
  let detail = '';
  for (let i = 0; i < ITERATIONS; i += 1) {
    const started = performance.now();
    const result = await fn();
    samples.push(performance.now() - started);
    if (i === 0) detail = describe(result);
  }
  samples.sort((a, b) => a - b);
  const [p50, p99, max] = [percentile(samples, 50), percentile(samples, 99), samples[samples.length - 1] ?? 0];
  console.log(
    `${label.padEnd(52)} p50 ${p50.toFixed(2).padStart(7)}  p99 ${p99.toFixed(2).padStart(7)}  max ${max.toFixed(2).padStart(7)}  ${detail}`,
  );
  return p50;
}

/** A short note on what a call returned (result counts), for the report. */
function describe(result: unknown): string {
  if (typeof result !== 'object' || result === null) return '';
  if ('results' in result && Array.isArray(result.results)) {
    const more = 'hasMore' in result && result.hasMore === true ? ', hasMore' : '';
    return `(${result.results.length} results${more})`;
  }
  if ('items' in result && Array.isArray(result.items) && 'pagination' in result) {
    const pagination = result.pagination;
    const total =
      typeof pagination === 'object' && pagination !== null && 'total' in pagination ? String(pagination.total) : '?';
    return `(${result.items.length} items of ${total})`;
  }
  return '';
}

async function explain(pool: Pool, search: string): Promise<void> {
  const plan = await pool.query(
    'EXPLAIN (ANALYZE, COSTS OFF) SELECT name, spec FROM dags WHERE spec ILIKE $1 ORDER BY name LIMIT 11',
    [`%${search}%`],
  );
  console.log(`\nplan of the search for ${JSON.stringify(search)}:`);
  for (const row of plan.rows) console.log(`  ${String(Object.values(row)[0])}`);
}

async function main(): Promise<void> {
  const schema = `bench_dag_${randomBytes(4).toString('hex')}`;
  const logger = createLogger({ name: 'dag-search-bench', level: 'silent' });
  const pool = createPool({ url: DATABASE_URL, schema, max: 16, logger });
  try {
    await migrate(pool, schema, DAG_MIGRATIONS);
    const catalog = new DagCatalog(new DagRepository(pool));
    const seeded = performance.now();
    await seedDags(catalog, COUNT);
    await pool.query('ANALYZE dags');
    const size = await pool.query(
      "SELECT pg_size_pretty(pg_total_relation_size('dags')) AS size, avg(length(spec))::int AS avg FROM dags",
    );
    console.log(
      `seeded ${COUNT} DAGs into ${schema} in ${((performance.now() - seeded) / 1000).toFixed(1)} s; table ${String(size.rows[0]?.size)}, avg spec ${String(size.rows[0]?.avg)} chars; ${ITERATIONS} iterations each (ms)\n`,
    );

    const search =
      (text: string, extra: { workspace?: string; limit?: number } = {}) =>
      () =>
        catalog.search({ search: text, ...extra });
    await measure('search rare token "batch-b4242" (few DAGs)', search('batch-b4242'));
    await measure('search rare token, other case "BATCH-B4242"', search('BATCH-B4242'));
    await measure('search medium word "reconcile" (~4 %)', search('reconcile'));
    await measure('search common "echo" (every DAG)', search('echo'));
    await measure('search common "echo", limit 50', search('echo', { limit: 50 }));
    await measure('search 2 chars "zq" (no trigram)', search('zq'));
    await measure('search absent "no-such-text-anywhere"', search('no-such-text-anywhere'));
    await measure('search "reconcile" in workspace ws-3', search('reconcile', { workspace: 'ws-3' }));
    const first = await catalog.search({ search: 'echo' });
    await measure('search "echo" page 2 (cursor)', () =>
      catalog.search({ search: 'echo', cursor: first.nextCursor ?? '' }),
    );
    console.log('');
    await measure('list page 1 of 50, sort name', () => catalog.list({}));
    await measure('list page 100 of 50, sort name desc', () => catalog.list({ page: 100, order: 'desc' }));
    await measure('list name filter "report", 50', () => catalog.list({ name: 'report' }));
    await measure('list labels [team=data, env=prod], 50', () => catalog.list({ labels: ['team=data', 'env=prod'] }));
    await measure('list page 1 of 50, sort nextRun', () => catalog.list({ sort: 'nextRun' }));
    await measure('list page 50 of 50, sort nextRun desc', () =>
      catalog.list({ sort: 'nextRun', order: 'desc', page: 50 }),
    );
    console.log('');
    await measure('get (found)', () => catalog.get('dag-04243'));
    await measure('get unknown (did-you-mean over all names)', () =>
      catalog.get('dag-0424x').catch((error: unknown) => error),
    );
    await explain(pool, 'batch-b4242');
    await explain(pool, 'echo');
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
