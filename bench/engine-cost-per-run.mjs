#!/usr/bin/env node
/**
 * What one started DAG-run costs the databases (issue 28): starts the built
 * stack, starts N one-step runs of `bench-true` one after another (so nothing
 * else runs), and prints per run the PostgreSQL transactions committed (the
 * whole database's `xact_commit`, so run it on a quiet machine), the rows
 * inserted / updated / deleted per table of the stack's schemas and the
 * statements per schema (`pg_stat_user_tables`), and the Redis commands
 * (`INFO commandstats` of the machine's Redis: other work on it counts too).
 *
 *   node bench/engine-cost-per-run.mjs [runs=50] [dag=bench-true|bench-chain|bench-foreach]
 *
 * Needs a built tree, PostgreSQL and Redis answering (DATABASE_URL, REDIS_URL).
 */
import pg from 'pg';
import { execFileSync } from 'node:child_process';
import { startStack, createApiKey } from './lib/stack.mjs';
import { openSession, call, keepAliveAgent } from './lib/mcp-http.mjs';
import { applyDags } from './lib/dags.mjs';
import { engineDags, startCall, drainRuns } from './lib/engine.mjs';

const RUNS = Number(process.argv[2] ?? 50);
/** The DAG started (`bench-chain`: per run of 100 steps; default `bench-true`, one step). */
const DAG = process.argv[3] ?? 'bench-true';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function redisStats() {
  const text = execFileSync('redis-cli', ['-u', redisUrl, 'INFO', 'commandstats'], { encoding: 'utf8' });
  const calls = {};
  for (const m of text.matchAll(/cmdstat_([a-z|_]+):calls=(\d+)/g)) calls[m[1]] = Number(m[2]);
  return calls;
}

async function pgStats(db, schemas) {
  const commits = await db.query(
    'SELECT xact_commit::bigint AS c FROM pg_stat_database WHERE datname = current_database()',
  );
  const tables = await db.query(
    `SELECT schemaname, relname, n_tup_ins::bigint AS ins, n_tup_upd::bigint AS upd, n_tup_del::bigint AS del,
            (seq_scan + COALESCE(idx_scan, 0))::bigint AS scans
       FROM pg_stat_user_tables WHERE schemaname = ANY($1)`,
    [schemas],
  );
  return { commits: Number(commits.rows[0].c), tables: tables.rows };
}

const stack = await startStack({ databaseUrl, redisUrl });
const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();
try {
  const token = await createApiKey(stack);
  const agent = keepAliveAgent(1);
  const session = await openSession(stack.mcpUrl, { token, agent });
  await applyDags(stack.mcpUrl, session, token, engineDags({ chainSteps: 2, foreachItems: 2 }));
  const start = async (i) => {
    const answer = await call(stack.mcpUrl, session, 'tools/call', startCall(DAG).params, {
      token,
      agent,
      id: i,
    });
    const id = answer?.structuredContent?.dagRunId;
    if (typeof id !== 'string') throw new Error(`start: ${JSON.stringify(answer).slice(0, 300)}`);
    await drainRuns(databaseUrl, stack.schemaOf('run-service'), DAG, [id], { pollMs: 5 });
  };
  for (let i = 0; i < 10; i += 1) await start(i + 1);
  await sleep(1500);
  await db.query('SELECT pg_stat_clear_snapshot()');
  const before = { pg: await pgStats(db, stack.schemas), redis: redisStats() };
  for (let i = 0; i < RUNS; i += 1) await start(i + 100);
  await sleep(1500);
  await db.query('SELECT pg_stat_clear_snapshot()');
  const after = { pg: await pgStats(db, stack.schemas), redis: redisStats() };
  const per = (a, b) => Math.round(((a - b) / RUNS) * 100) / 100;
  console.log(`per run (${RUNS} runs, one at a time):`);
  console.log(`  PostgreSQL transactions committed: ${per(after.pg.commits, before.pg.commits)}`);
  const key = (r) => `${r.schemaname.replace(/^bench_[0-9a-f]+_/, '')}.${r.relname}`;
  const old = new Map(before.pg.tables.map((r) => [key(r), r]));
  for (const row of after.pg.tables) {
    const prev = old.get(key(row)) ?? { ins: 0, upd: 0, del: 0, scans: 0 };
    const d = ['ins', 'upd', 'del', 'scans'].map((f) => per(Number(row[f]), Number(prev[f])));
    if (d.some((v) => v !== 0))
      console.log(`  ${key(row).padEnd(44)} ins ${d[0]}  upd ${d[1]}  del ${d[2]}  scans ${d[3]}`);
  }
  const commands = Object.entries(after.redis)
    .map(([name, n]) => [name, per(n, before.redis[name] ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  console.log(
    `  Redis commands: ${Math.round(commands.reduce((s, [, n]) => s + n, 0) * 100) / 100} (${commands.map(([c, n]) => `${c} ${n}`).join(', ')})`,
  );
} finally {
  await db.end();
  await stack.stop();
}
