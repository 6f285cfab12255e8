#!/usr/bin/env node
/**
 * Scale bench (issue 47 item 3): `dagu_read runs` at a million runs, through the full stack
 * (MCP over HTTP → gateway → bus → run-service → PostgreSQL), with and without a read replica.
 *
 *   npm run bench:scale                       # bash bench/bench.sh --scale-runs (builds first)
 *   node bench/scale-runs.mjs [--runs 1000000] [--dags 10000] [--calls 200] [--warmup 30]
 *                             [--out bench/results]
 *   node bench/scale-runs.mjs --runs 10000000  # the long form (10M runs; ~10x the seed time and disk)
 *
 * 1. Starts a throwaway PostgreSQL primary of its own (bench/lib/pg-pair.mjs; never the machine's)
 *    and the stack on it, then seeds run-service's schema with `--runs` ended runs over `--dags`
 *    DAGs in set-based SQL (bench/lib/scale-seed.mjs) and reports the seed time and the size of
 *    the run store per 1,000 runs.
 * 2. "primary": one MCP session, one connection, `--calls` sequential calls of each query after
 *    `--warmup` (first page; by DAG, a different DAG each call; by status `failed` (10 %) and
 *    `rejected` (0.1 %); by DAG and status), latency p50/p95/p99 per query as the client sees it.
 * 3. "replica": the stack stopped (data kept), a `pg_basebackup -R` standby of the primary started,
 *    the stack started again with `DATABASE_READ_URL` on the standby, the same calls; run-service's
 *    `dagu_db_reads_total{source}` shows which server answered them.
 *
 * Target (issue 47): p95 ≤ 50 ms for every query in both modes. Prints a table; writes
 * `<out>/scale-runs-<stamp>.json` and `<out>/scale-runs-latest.json`. Exit code 1 when the bench
 * itself failed, 0 otherwise (a missed target is reported, as `npm run bench` does).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { call, closeSession, keepAliveAgent, openSession } from './lib/mcp-http.mjs';
import { startBenchPrimary, startBenchStandby } from './lib/pg-pair.mjs';
import { runStoreBytes, scaleDagName, seedRuns, statusIndexEffect } from './lib/scale-seed.mjs';
import { createApiKey, ROOT, startStack } from './lib/stack.mjs';
import { summarize } from './lib/stats.mjs';

const { values: argv } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000000' },
    dags: { type: 'string', default: '10000' },
    calls: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '30' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results') },
  },
});
const settings = {
  runs: Number(argv.runs),
  dags: Number(argv.dags),
  calls: Number(argv.calls),
  warmup: Number(argv.warmup),
};
const TARGET_P95_MS = 50;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// The engine leaves ended runs alone; retention would delete none of 7 days, but say so.
const STACK_ENV = { RUN_HIST_RETENTION_DAYS: '3650' };

/** The queries measured: name → query string of call `i` (`dagu_read {target: 'runs', query}`). */
const QUERIES = {
  first_page: () => '',
  by_dag: (i) => `name=${scaleDagName((i * 7919) % settings.dags)}`,
  by_status: () => 'status=2',
  by_rare_status: () => 'status=8',
  by_dag_and_status: (i) => `name=${scaleDagName((i * 104_729) % settings.dags)}&status=2`,
};

async function measure(stack, label) {
  const token = await createApiKey(stack);
  const agent = keepAliveAgent(1);
  const session = await openSession(stack.mcpUrl, { token, agent });
  const read = async (query, id) => {
    const t0 = performance.now();
    const result = await call(
      stack.mcpUrl,
      session,
      'tools/call',
      { name: 'dagu_read', arguments: { target: 'runs', ...(query === '' ? {} : { query }) } },
      { token, agent, id },
    );
    const ms = performance.now() - t0;
    const items = result.structuredContent?.data?.items;
    if (result.isError || !Array.isArray(items) || items.length === 0)
      throw new Error(`dagu_read runs ${query} answered ${JSON.stringify(result).slice(0, 300)}`);
    return ms;
  };
  const figures = {};
  let id = 10;
  for (const [name, queryOf] of Object.entries(QUERIES)) {
    for (let i = 0; i < settings.warmup; i++) await read(queryOf(i + 100_000), id++);
    const samples = [];
    for (let i = 0; i < settings.calls; i++) samples.push(await read(queryOf(i), id++));
    const s = summarize(samples);
    figures[name] = { p50: round2(s.p50), p95: round2(quantile95(samples)), p99: round2(s.p99), max: round2(s.max) };
    console.log(
      `${label.padEnd(8)} ${name.padEnd(18)} p50 ${fmt(s.p50)}  p95 ${fmt(quantile95(samples))}  p99 ${fmt(s.p99)}`,
    );
  }
  await closeSession(stack.mcpUrl, session, { token, agent });
  agent.destroy();
  return figures;
}

const round2 = (v) => Math.round(v * 100) / 100;
const fmt = (v) => `${v.toFixed(1).padStart(6)} ms`;
function quantile95(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
}

/** run-service's `dagu_db_reads_total` by source (`replica`, `primary`), from its /metrics. */
async function readsBySource(stack) {
  const text = await (await fetch(stack.metricsUrls['run-service'])).text();
  const totals = { replica: 0, primary: 0 };
  for (const m of text.matchAll(/^dagu_db_reads_total\{[^}]*source="(replica|primary)"[^}]*\} (\d+)/gm))
    totals[m[1]] = Number(m[2]);
  return totals;
}

async function waitCaughtUp(primaryUrl, standbyUrl) {
  const p = new pg.Client({ connectionString: primaryUrl });
  const s = new pg.Client({ connectionString: standbyUrl });
  await Promise.all([p.connect(), s.connect()]);
  try {
    const lsn = (await p.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
    for (let i = 0; i < 1200; i++) {
      const ok = (await s.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn])).rows[0].ok;
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the standby did not catch up in 120 s');
  } finally {
    await Promise.all([p.end(), s.end()]);
  }
}

const results = { startedAt: new Date().toISOString(), settings, targetP95Ms: TARGET_P95_MS };
let primary;
let standby;
let stack;
try {
  primary = await startBenchPrimary();
  stack = await startStack({ databaseUrl: primary.url, redisUrl, extraEnv: STACK_ENV });
  const schema = stack.schemaOf('run-service');
  const client = new pg.Client({ connectionString: primary.url });
  await client.connect();
  const t0 = performance.now();
  results.seedSeconds = await seedRuns(client, schema, settings);
  results.seedSeconds.total = Math.round(performance.now() - t0) / 1000;
  const size = await runStoreBytes(client, schema);
  results.statusIndex = await statusIndexEffect(client, schema, 8);
  console.log(
    `run.list by a rare status (SQL alone): ${results.statusIndex.withIndexMs} ms with runs_status_pk_idx, ` +
      `${results.statusIndex.withoutIndexMs} ms without`,
  );
  await client.end();
  results.size = {
    ...size,
    bytesPer1000Runs: Math.round((size.schemaBytes / settings.runs) * 1000),
  };
  console.log(
    `seeded ${settings.runs.toLocaleString('en-US')} runs over ${settings.dags.toLocaleString('en-US')} DAGs in ` +
      `${results.seedSeconds.total} s; run store ${(size.schemaBytes / 2 ** 20).toFixed(0)} MiB, ` +
      `${(results.size.bytesPer1000Runs / 1024).toFixed(0)} KiB per 1,000 runs`,
  );
  results.primary = await measure(stack, 'primary');
  const id = stack.id;
  await stack.stop({ keepData: true });
  stack = undefined;

  const b0 = performance.now();
  standby = await startBenchStandby(primary);
  await waitCaughtUp(primary.url, standby.url);
  results.standbySetupSeconds = Math.round(performance.now() - b0) / 1000;
  stack = await startStack({
    databaseUrl: primary.url,
    redisUrl,
    id,
    extraEnv: { ...STACK_ENV, DATABASE_READ_URL: standby.url },
  });
  const before = await readsBySource(stack);
  results.replica = await measure(stack, 'replica');
  const after = await readsBySource(stack);
  results.replicaReads = {
    servedByReplica: after.replica - before.replica,
    servedByPrimary: after.primary - before.primary,
    calls: Object.keys(QUERIES).length * (settings.calls + settings.warmup),
  };
  console.log(
    `run-service reads in the replica phase: ${results.replicaReads.servedByReplica} by the replica, ` +
      `${results.replicaReads.servedByPrimary} by the primary (${results.replicaReads.calls} calls)`,
  );
  const replicaLines = stack
    .output()
    .split('\n')
    .filter((line) => /replica/i.test(line) && !/RUN_STEP_USER/.test(line));
  if (replicaLines.length > 0) console.log(replicaLines.slice(-10).join('\n'));
  results.targetMet = ['primary', 'replica'].every((mode) =>
    Object.values(results[mode]).every((f) => f.p95 <= TARGET_P95_MS),
  );
  console.log(`target p95 ≤ ${TARGET_P95_MS} ms: ${results.targetMet ? 'met' : 'MISSED'}`);
} catch (err) {
  results.error = err instanceof Error ? (err.stack ?? err.message) : String(err);
  console.error(results.error);
  if (stack !== undefined) console.error(stack.output().slice(-4000));
  process.exitCode = 1;
} finally {
  await stack?.stop().catch(() => undefined);
  await standby?.destroy();
  await primary?.destroy();
  results.finishedAt = new Date().toISOString();
  mkdirSync(argv.out, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(join(argv.out, `scale-runs-${results.startedAt.replace(/[:.]/g, '-')}.json`), json);
  writeFileSync(join(argv.out, 'scale-runs-latest.json'), json);
}
