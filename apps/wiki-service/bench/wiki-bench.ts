/**
 * wiki-service read latency on a realistic wiki (issue target: with 10,000
 * pages of ~2 KB across 20 workspaces, search < 100 ms p50 and a collection
 * page < 20 ms).
 *
 * Run (from the repo root; no build needed — SWC compiles on the fly;
 * PostgreSQL and Redis must be up):
 *   node apps/wiki-service/bench/wiki-bench.run.js [--pages 10000] [--workspaces 20] [--bytes 2048]
 *        [--n 100] [--db postgres://postgres@127.0.0.1:5432/test] [--redis redis://127.0.0.1:6379] [--keep]
 * or `npx -y pnpm@10.34.9 --filter @dagu-mcp/wiki-service bench`.
 *
 * Seeds a schema of its own (`wiki_bench_<random>`, dropped at the end unless
 * --keep) and VACUUM ANALYZEs it, as autovacuum would in a running system
 * (statistics, and the visibility map index-only scans need), then times each
 * case `n` times after 10 untimed runs, twice:
 *  - db:  the domain function against PostgreSQL (what the handler runs);
 *  - bus: `BusClient.call` → `ServiceWorker` → handler → PostgreSQL → reply,
 *         i.e. everything but the gateway's HTTP/MCP layer.
 * Prints p50 / p95 / max in ms per case and the number of results.
 */
import { randomBytes } from 'node:crypto';
import { BusClient, ServiceWorker } from '@dagu-mcp/bus';
import { ANONYMOUS_PRINCIPAL, wikiOps, type WikiListRequest, type WikiSearchRequest } from '@dagu-mcp/contracts';
import { createAppMetrics, createLogger, createPool, migrate } from '@dagu-mcp/runtime';
import { loadServiceConfig } from '@dagu-mcp/service-kit';
import { WIKI_MIGRATIONS } from '../src/db/migrations';
import { readWikiCollection } from '../src/pages/wiki-collection';
import { readWikiPage } from '../src/pages/wiki-page';
import { searchWiki } from '../src/pages/wiki-search';
import { wikiService } from '../src/wiki-service';
import { COMMON, MEDIUM, RARE, TITLE_WORD, generateCorpus, storeCorpus } from './wiki-corpus';

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const PAGES = Number(argument('pages', '10000'));
const WORKSPACES = Number(argument('workspaces', '20'));
const BYTES = Number(argument('bytes', '2048'));
const N = Number(argument('n', '100'));
const DB = argument('db', 'postgres://postgres@127.0.0.1:5432/test');
const REDIS = argument('redis', 'redis://127.0.0.1:6379');
const KEEP = process.argv.includes('--keep');

type Case =
  | { name: string; kind: 'search'; request: WikiSearchRequest }
  | { name: string; kind: 'list'; request: WikiListRequest };

const CASES: Case[] = [
  { name: `search rare "${RARE}" (10 pages), all workspaces`, kind: 'search', request: { search: RARE } },
  { name: `search medium "${MEDIUM}" (1 %), all workspaces`, kind: 'search', request: { search: MEDIUM } },
  { name: `search common "${COMMON}" (50 %), all workspaces`, kind: 'search', request: { search: COMMON } },
  { name: `search common "${COMMON}", one workspace`, kind: 'search', request: { search: COMMON, workspace: 'ws08' } },
  {
    name: `search rare "${RARE}", one workspace (0 hits)`,
    kind: 'search',
    request: { search: RARE, workspace: 'ws07' },
  },
  { name: `search title word "${TITLE_WORD}" (2 %)`, kind: 'search', request: { search: TITLE_WORD.toUpperCase() } },
  { name: 'search absent word "qqqxyz"', kind: 'search', request: { search: 'qqqxyz' } },
  {
    name: 'search phrase "kubernetes deployment" (none adjacent)',
    kind: 'search',
    request: { search: `${MEDIUM} ${COMMON}` },
  },
  { name: 'search 2 characters "zq"', kind: 'search', request: { search: 'zq' } },
  { name: 'collection tree, one workspace, page 1', kind: 'list', request: { workspace: 'ws03' } },
  { name: 'collection tree, all workspaces, page 1', kind: 'list', request: {} },
  { name: 'collection flat, all, perPage 200, page 50', kind: 'list', request: { flat: true, perPage: 200, page: 50 } },
  {
    name: 'collection flat, all, sort mtime desc',
    kind: 'list',
    request: { flat: true, sort: 'mtime', order: 'desc' },
  },
  {
    name: 'collection tree, one workspace, prefix area-2/',
    kind: 'list',
    request: { workspace: 'ws11', prefix: 'area-2/' },
  },
  { name: 'collection flat, all, sort name, page 100', kind: 'list', request: { flat: true, sort: 'name', page: 100 } },
];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function time(run: () => Promise<number>): Promise<{ p50: number; p95: number; max: number; count: number }> {
  let count = 0;
  for (let i = 0; i < 10; i += 1) count = await run();
  const samples: number[] = [];
  for (let i = 0; i < N; i += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return {
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    max: samples[samples.length - 1] ?? Number.NaN,
    count,
  };
}

async function main(): Promise<void> {
  const logger = createLogger({ name: 'wiki-bench', level: 'warn' });
  const schema = `wiki_bench_${randomBytes(4).toString('hex')}`;
  const pool = createPool({ url: DB, schema, max: 10, logger });
  const prefix = `bench-wiki-${randomBytes(4).toString('hex')}`;
  const config = loadServiceConfig({ schema, opsPort: 8083 }, {});
  const worker = new ServiceWorker({
    service: 'wiki',
    catalog: wikiOps,
    handlers: wikiService.createHandlers({
      pool,
      logger,
      config,
      replica: 'bench',
      metrics: createAppMetrics({ app: 'wiki-service', processMetrics: false }).registry,
    }),
    redisUrl: REDIS,
    prefix,
  });
  const client = new BusClient({ redisUrl: REDIS, prefix, defaultTimeoutMs: 30_000 });
  try {
    await migrate(pool, schema, WIKI_MIGRATIONS);
    const seeded = performance.now();
    const corpus = generateCorpus({ pages: PAGES, workspaces: WORKSPACES, bytes: BYTES, seed: 42 });
    await storeCorpus(pool, corpus);
    const avg = corpus.reduce((sum, p) => sum + Buffer.byteLength(p.content), 0) / corpus.length;
    console.log(
      `seeded ${corpus.length} pages (avg ${avg.toFixed(0)} B) in ${WORKSPACES} workspaces in ${((performance.now() - seeded) / 1000).toFixed(1)} s; schema ${schema}`,
    );
    await Promise.all([worker.start(), client.start()]);
    const principal = { principal: ANONYMOUS_PRINCIPAL };
    const sample = corpus[1234] ?? corpus[0];
    const ref = { workspace: sample?.workspace ?? 'ws00', path: sample?.path ?? 'x' };

    console.log(
      `\n${'case'.padEnd(58)} ${'db p50'.padStart(8)} ${'p95'.padStart(7)} ${'bus p50'.padStart(8)} ${'p95'.padStart(7)} ${'max'.padStart(7)}  results`,
    );
    const row = (
      name: string,
      db: { p50: number; p95: number },
      bus: { p50: number; p95: number; max: number; count: number },
    ): void => {
      const f = (ms: number): string => ms.toFixed(2).padStart(7);
      console.log(
        `${name.padEnd(58)} ${f(db.p50)} ${f(db.p95)}  ${f(bus.p50)} ${f(bus.p95)} ${f(bus.max)}  ${bus.count}`,
      );
    };
    for (const c of CASES) {
      if (c.kind === 'search') {
        const db = await time(async () => (await searchWiki(pool, c.request)).results.length);
        const bus = await time(
          async () => (await client.call('wiki', wikiOps, 'wiki.search', c.request, principal)).results.length,
        );
        row(c.name, db, bus);
      } else {
        const db = await time(async () => (await readWikiCollection(pool, c.request)).pagination.total);
        const bus = await time(
          async () => (await client.call('wiki', wikiOps, 'wiki.list', c.request, principal)).pagination.total,
        );
        row(c.name, db, bus);
      }
    }
    const db = await time(async () => (await readWikiPage(pool, ref)).size);
    const bus = await time(async () => (await client.call('wiki', wikiOps, 'wiki.get', ref, principal)).size);
    row('page read', db, bus);
  } finally {
    await client.close();
    await worker.close();
    if (!KEEP) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
