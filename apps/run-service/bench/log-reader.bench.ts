/**
 * Log capture and log reads at scale (dagu-model §6; issue "Run engine
 * core" targets: a step printing 1,000,000 lines is captured without losing
 * a line or stalling the step; `tail=10000` and `offset=500000&limit=1000`
 * each answer in < 100 ms).
 *
 * Run from the repo root (no build needed; SWC compiles on the fly;
 * PostgreSQL must be up, database `test` unless TEST_DATABASE_URL says otherwise):
 *   node -r ./packages/bus/test-fixtures/ts-register.js apps/run-service/bench/log-reader.bench.ts [--lines 1000000] [--reads 30]
 * or: cd apps/run-service && npm run bench:logs
 *
 * Measures, for a `seq 1 N` step and for a step printing N lines of 100 bytes:
 *  - the raw time of the same command writing to /dev/null (what the step costs alone);
 *  - the step's own duration under the engine (process start → exit);
 *  - the time until every line is in PostgreSQL (run start → run end), and checks
 *    that exactly N lines with numbers 1…N are stored;
 *  - `tail=10000`, `offset=N/2&limit=1000` and `head=1000` read times (p50 / p95 / max over --reads).
 */
import { execFileSync } from 'node:child_process';
import type { StepLogQuery } from '@dagu-mcp/contracts';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';
import { readRunLogs, readStepLog } from '../src/read/run-logs';

function argOf(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const N = argOf('lines', 1_000_000);
const READS = argOf('reads', 30);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function rawMs(command: string): number {
  const started = performance.now();
  execFileSync('/bin/sh', ['-c', `${command} > /dev/null`]);
  return performance.now() - started;
}

async function measureReads(env: RunTestEnv, name: string, id: string, query: StepLogQuery): Promise<string> {
  const times: number[] = [];
  let lineCount = 0;
  for (let i = 0; i < READS; i++) {
    const started = performance.now();
    const log = await readStepLog(env.pool, { dagName: name, dagRunId: id, stepName: 'big', query });
    times.push(performance.now() - started);
    lineCount = log.lineCount;
  }
  const label = Object.entries(query)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return `  read ${label.padEnd(22)} lines=${lineCount}  p50=${percentile(times, 50).toFixed(1)} ms  p95=${percentile(times, 95).toFixed(1)} ms  max=${Math.max(...times).toFixed(1)} ms`;
}

async function scenario(env: RunTestEnv, name: string, command: string): Promise<void> {
  const raw = rawMs(command);
  const started = performance.now();
  const id = await env.start(name, `steps:\n  - name: big\n    run: '${command}'\n`);
  const detail = await env.waitForEnd(name, id, 600_000);
  const durable = performance.now() - started;
  const step = stepOf(detail, 'big');
  const stepMs = Date.parse(step.finishedAt ?? '') - Date.parse(step.startedAt ?? '');
  const check = await env.pool.query(
    `SELECT sum(l.line_count)::int AS n, min(l.first_line) AS lo, max(l.first_line + l.line_count - 1) AS hi, count(*)::int AS chunks, (SELECT total_lines FROM log_streams WHERE id = s.stdout_log) AS total
     FROM log_chunks l JOIN run_steps s ON l.stream_id = s.stdout_log
     WHERE s.run_pk = (SELECT pk FROM runs WHERE dag_run_id = $1) AND s.name = 'big' GROUP BY s.stdout_log`,
    [id],
  );
  const row: unknown = check.rows[0];
  console.log(`${name}: ${N} lines — ${command}`);
  console.log(`  raw command (to /dev/null): ${raw.toFixed(0)} ms`);
  console.log(`  step under the engine (process start → exit): ${stepMs} ms  (status ${detail.statusLabel})`);
  console.log(
    `  run start → every line durable in PostgreSQL: ${durable.toFixed(0)} ms  (${((N / durable) * 1000).toFixed(0)} lines/s)`,
  );
  console.log(`  stored: ${JSON.stringify(row)}`);
  const scheduler = await readRunLogs(env.pool, { dagName: name, dagRunId: id, tail: 10_000 });
  const pauses = scheduler.schedulerLog.content
    .split('\n')
    .filter((line) => line.includes('paused: the log buffer is full')).length;
  console.log(`  times the step's output was paused for backpressure: ${pauses}`);
  const queries: StepLogQuery[] = [{ tail: 10_000 }, { offset: Math.floor(N / 2), limit: 1000 }, { head: 1000 }];
  for (const query of queries) {
    console.log(await measureReads(env, name, id, query));
  }
}

async function main(): Promise<void> {
  const env = await createRunTestEnv('bench_logs');
  try {
    await scenario(env, 'seq', `seq 1 ${N}`);
    await scenario(
      env,
      'wide',
      `yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -n ${N}`,
    );
  } finally {
    await env.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
