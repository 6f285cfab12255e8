#!/usr/bin/env node
/**
 * The benchmark harness: the full stack side by side with a plain SDK server,
 * in one run, on this machine. `npm run bench` installs and builds first
 * (bench/bench.sh); this file assumes a built tree and a reachable Redis and
 * PostgreSQL.
 *
 *   node bench/run.mjs [--smoke] [--rounds 5] [--warmup 5] [--duration 10]
 *                      [--connections 32] [--dags 10000] [--only S1,S2,…]
 *                      [--out bench/results] [--profile] [--no-benchmarks-md]
 *                      [--engine-counts 100,1000] [--engine-replicas 1,2]
 *
 * Starts the stack (4 apps from dist/, own bus prefix and schemas), signs in,
 * creates an API key, opens one MCP session, seeds the DAGs through
 * `dagu_change`, starts the baseline server with the stack's own answers,
 * then runs every scenario. Each load runs in its own process
 * (bench/lib/load.mjs). Scenarios S1–S3 run in rounds, side by side with the
 * baseline, ratios computed round by round; S1 and S2 are measured in both
 * MCP eras in the same rounds (the session revision, and the stateless
 * 2026-07-28 revision with its envelope in `_meta` and no session). Results go to
 * `<out>/<stamp>.json|.md` and `<out>/latest.json|.md` (smoke: `<out>/smoke.*`),
 * and a full run rewrites the generated section of BENCHMARKS.md.
 *
 * Exit code: 0 when every scenario produced a record (missed targets
 * included), 1 when the harness itself failed.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { applyDags, cloneDags, dagName, seedDags } from './lib/dags.mjs';
import {
  call,
  closeSession,
  keepAliveAgent,
  mcpHeaders,
  MODERN_META,
  MODERN_VERSION,
  openSession,
} from './lib/mcp-http.mjs';
import {
  CPU_COLUMNS,
  consoleTable,
  fmtMs,
  fmtRps,
  fmtX,
  machineInfo,
  MARK_END,
  MARK_START,
  markdownReport,
  readCommit,
} from './lib/report.mjs';
import { median, ratio, round } from './lib/stats.mjs';
import { ROOT, startBaseline, startStack, createApiKey } from './lib/stack.mjs';
import { drainRuns, engineDags, runTimeline, startCall } from './lib/engine.mjs';

const SCENARIO_IDS = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7', 'S8', 'S9', 'S10'];
const { values: argv } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    dags: { type: 'string' },
    burst: { type: 'string' },
    'sse-streams': { type: 'string' },
    'sse-hold': { type: 'string' },
    'sse-keepalive-ms': { type: 'string' },
    'log-lines': { type: 'string' },
    'engine-counts': { type: 'string' },
    'engine-replicas': { type: 'string' },
    seed: { type: 'string', default: 'sql' },
    only: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'no-benchmarks-md': { type: 'boolean', default: false },
  },
});
const smoke = argv.smoke;
const num = (name, full, small) => (argv[name] !== undefined ? Number(argv[name]) : smoke ? small : full);
const only =
  argv.only === undefined ? new Set(SCENARIO_IDS) : new Set(argv.only.split(',').map((s) => s.trim().toUpperCase()));
if (only.has('S3')) only.add('S1');
const settings = {
  rounds: num('rounds', 5, 1),
  warmupSec: num('warmup', 5, 0.5),
  durationSec: num('duration', 10, 1),
  connections: num('connections', 32, 32),
  dags: num('dags', 10_000, 200),
  specNames: smoke ? 8 : 64,
  searchIterations: smoke ? 8 : 100,
  execIterations: smoke ? 3 : 30,
  burst: num('burst', 100, 5),
  sseStreams: num('sse-streams', 2000, 20),
  sseHoldSec: num('sse-hold', 40, 2),
  sseKeepAliveMs: num('sse-keepalive-ms', 15_000, 15_000),
  logLines: num('log-lines', 1_000_000, 10_000),
  logReads: smoke ? 3 : 20,
  // S8–S10 (engine): runs started at once, chain length, foreach items, S10's read window.
  engineCounts:
    argv['engine-counts'] !== undefined ? argv['engine-counts'].split(',').map(Number) : smoke ? [10] : [100, 1000],
  engineReplicas: argv['engine-replicas'] !== undefined ? argv['engine-replicas'].split(',').map(Number) : [1, 2],
  chainSteps: smoke ? 10 : 100,
  foreachItems: smoke ? 20 : 500,
  engineRounds: smoke ? 1 : 5,
  mixedReadSec: smoke ? 3 : 15,
  databaseUrl: process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  scenarios: SCENARIO_IDS.filter((id) => only.has(id)),
};
const sideBySideSelected = ['S1', 'S2', 'S3'].some((id) => only.has(id));
const outDir = argv.out ?? join(ROOT, 'bench', 'results');
const writeBenchmarksMd = !smoke && argv.only === undefined && !argv['no-benchmarks-md'];
const LOAD = join(ROOT, 'bench', 'lib', 'load.mjs');
const TERMINAL = new Set(['succeeded', 'failed', 'aborted', 'partially_succeeded', 'rejected']);

const log = (msg) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const toolCall = (name, args) => ({ method: 'tools/call', params: { name, arguments: args } });

// ---------------------------------------------------------------- CPU sampling

/** Clock ticks of CPU (user+system) of `pid`, or 0 when it is gone. */
function ticksOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** Pids whose command name is `comm`. */
function pidsNamed(comm) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Ticks per labelled pid and per pid of the redis/postgres processes, and busy/total ticks of the machine. */
function cpuSnapshot(pids) {
  const ticks = {};
  for (const [label, pid] of Object.entries(pids)) if (pid !== undefined) ticks[label] = ticksOf(pid);
  const groups = { redis: {}, postgres: {} };
  for (const pid of pidsNamed('redis-server')) groups.redis[pid] = ticksOf(pid);
  for (const pid of pidsNamed('postgres')) groups.postgres[pid] = ticksOf(pid);
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { at: performance.now(), ticks, groups, machineBusy: total - idle, machineTotal: total };
}

/**
 * % of one core each labelled process and each group used between two
 * snapshots (100 ticks/s). A group counts the processes alive at the end
 * (those started in between count whole); the machine figure is all cores.
 */
function cpuUsage(a, b) {
  const seconds = (b.at - a.at) / 1000;
  if (seconds <= 0) return {};
  const pct = (ticks) => round((ticks / 100 / seconds) * 100, 0);
  const out = {};
  for (const label of Object.keys(b.ticks)) out[label] = pct(b.ticks[label] - (a.ticks[label] ?? 0));
  for (const [group, now] of Object.entries(b.groups)) {
    out[group] = pct(
      Object.entries(now).reduce((sum, [pid, t]) => sum + Math.max(0, t - (a.groups[group][pid] ?? 0)), 0),
    );
  }
  const cores = os.cpus().length;
  out.machine = round(
    ((b.machineBusy - a.machineBusy) / Math.max(1, b.machineTotal - a.machineTotal)) * 100 * cores,
    0,
  );
  return out;
}

// ---------------------------------------------------------------- latency breakdown

/**
 * Sum and count of the duration histograms the stack exports (runtime
 * metrics.ts): the gateway's HTTP requests of one MCP method, its bus calls
 * of one op, and the service's handler runs of that op. Null when a scrape fails.
 */
async function scrapeDurations({ service, op, mcpMethod }) {
  const read = async (url) => {
    try {
      const res = await fetch(url);
      return res.ok ? await res.text() : '';
    } catch {
      return '';
    }
  };
  const pick = (text, metric, needles) => {
    const out = { sum: 0, count: 0 };
    for (const line of text.split('\n')) {
      for (const part of ['sum', 'count']) {
        if (!line.startsWith(`${metric}_${part}{`)) continue;
        if (!needles.every((n) => line.includes(n))) continue;
        out[part] += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return out;
  };
  const [gateway, svc] = await Promise.all([read(stack.metricsUrls['mcp-gateway']), read(stack.metricsUrls[service])]);
  if (gateway === '') return null;
  return {
    http: pick(gateway, 'dagu_http_request_duration_seconds', [`mcp_method="${mcpMethod}"`]),
    bus: pick(gateway, 'dagu_bus_call_duration_seconds', [`op="${op}"`]),
    job: pick(svc, 'dagu_bus_job_duration_seconds', [`op="${op}"`]),
  };
}

/** Mean ms per request of each stage between two scrapes, and what each layer adds. */
function breakdownOf(a, b, clientMeanMs) {
  if (a === null || b === null) return undefined;
  const mean = (k) => {
    const n = b[k].count - a[k].count;
    return n > 0 ? ((b[k].sum - a[k].sum) / n) * 1000 : null;
  };
  const http = mean('http');
  const bus = mean('bus');
  const job = mean('job');
  const minus = (x, y) => (x !== null && y !== null && x !== undefined && y !== undefined ? round(x - y, 3) : null);
  return {
    requests: b.http.count - a.http.count,
    clientMs: round(clientMeanMs, 3),
    gatewayHttpMs: round(http, 3),
    busCallMs: round(bus, 3),
    serviceHandlerMs: round(job, 3),
    outsideGatewayMs: minus(clientMeanMs, http),
    gatewayOwnMs: minus(http, bus),
    busTransportMs: minus(bus, job),
  };
}

// ---------------------------------------------------------------- load processes

let cpuPids = {};

/**
 * Runs one load job in its own process; resolves with its result plus `cpu`
 * (usage during the timed part). A job that crashes resolves with `fatal`.
 */
function runLoad(job, timeoutMs, breakdown) {
  return new Promise((resolve) => {
    let scrapeStart;
    let scrapeEnd;
    const child = spawn(process.execPath, [LOAD, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let start;
    let end;
    let result;
    const pids = () => ({ ...cpuPids, load: child.pid });
    const timer = setTimeout(() => {
      err += `\nload process killed after ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d) => {
      out += d.toString();
      let nl;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line === 'PHASE measure') {
          start = cpuSnapshot(pids());
          if (breakdown !== undefined) scrapeStart = scrapeDurations(breakdown);
        } else if (line.startsWith('RESULT ')) {
          end = cpuSnapshot(pids());
          if (breakdown !== undefined) scrapeEnd = scrapeDurations(breakdown);
          result = JSON.parse(line.slice(7));
        }
      }
    });
    child.stderr.on('data', (d) => (err += d.toString()));
    child.on('exit', async (code) => {
      clearTimeout(timer);
      if (result === undefined) return resolve({ fatal: `load process exited ${code}: ${err.slice(-2000)}` });
      if (start !== undefined && end !== undefined) result.cpu = cpuUsage(start, end);
      if (scrapeStart !== undefined && scrapeEnd !== undefined)
        result.breakdown = breakdownOf(await scrapeStart, await scrapeEnd, result.latency?.mean);
      resolve(result);
    });
  });
}

// ---------------------------------------------------------------- the run

const results = {
  version: 1,
  mode: smoke ? 'smoke' : 'full',
  startedAt: new Date().toISOString(),
  finishedAt: undefined,
  machine: machineInfo(),
  commit: readCommit(ROOT),
  settings: { ...settings, databaseUrl: undefined, redisUrl: undefined },
  setup: {},
  rounds: [],
  cpu: {},
  scenarios: [],
};

let stack;
let baseline;
let token;
let session;
const setupAgent = keepAliveAgent(4);
let rpcId = 1_000_000;

/** One tools/call or other request in the bench session (setup and checks, not timed). */
const rpc = (method, params, timeoutMs = 60_000) =>
  call(stack.mcpUrl, session, method, params, { token, agent: setupAgent, id: rpcId++, timeoutMs });
const stackHeaders = () => mcpHeaders({ token, ...session });

/** Adds a scenario record; `fn` returns `{figures, checks}` or throws (the record then carries the error). */
async function scenario(id, title, fn) {
  if (id === 'B' ? !sideBySideSelected : !only.has(id)) return;
  log(`${id} ${title}`);
  const record = { id, title, status: 'ok', figures: {}, checks: [] };
  results.scenarios.push(record);
  try {
    const { figures, checks } = await fn(record);
    record.figures = figures ?? record.figures;
    record.checks = checks ?? record.checks;
  } catch (err) {
    record.status = 'error';
    record.error = String(err?.stack ?? err);
    log(`${id} failed: ${String(err?.message ?? err).split('\n')[0]}`);
  }
  for (const c of record.checks)
    log(
      `${id}   ${c.label}: ${c.value}${c.target ? ` (target ${c.target}: ${c.met === true ? 'met' : c.met === false ? 'MISSED' : '—'})` : ''}`,
    );
}

/** Sum of error counts of a load result. */
function errorCount(r) {
  if (r === undefined || r.fatal !== undefined) return Number.NaN;
  return Object.values(r.errors ?? {}).reduce((a, b) => a + (Number(b) || 0), 0);
}

const errorNote = (n) => (Number.isNaN(n) ? ' (load failed)' : n > 0 ? ` (${n} errors)` : '');

async function setup() {
  log(`starting the stack (${settings.dags.toLocaleString('en-US')} DAGs, ${smoke ? 'smoke' : 'full'} mode)`);
  const t0 = performance.now();
  stack = await startStack({
    databaseUrl: settings.databaseUrl,
    redisUrl: settings.redisUrl,
    profileDir: argv.profile ? join(outDir, 'profiles') : undefined,
    // The interval S6 checks the streams against (the gateway's default, set explicitly).
    extraEnv: { SSE_KEEPALIVE_MS: String(settings.sseKeepAliveMs) },
  });
  results.setup.stackStartSec = round((performance.now() - t0) / 1000);
  token = await createApiKey(stack);
  session = await openSession(stack.mcpUrl, { token, agent: setupAgent });
  if (session.sessionId === undefined) throw new Error('the gateway did not return an Mcp-Session-Id');
  const redis = new Redis(settings.redisUrl, { lazyConnect: true });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  const redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  cpuPids = {
    'mcp-gateway': stack.pids['mcp-gateway'],
    'dag-service': stack.pids['dag-service'],
    'run-service': stack.pids['run-service'],
  };
  results.setup.redisPid = redisPid;
  const t1 = performance.now();
  // `--seed mcp`: every DAG through dagu_change. `--seed sql` (default): the
  // first 1/40 (at least 50) through dagu_change, the rest copied from those
  // rows in SQL (bench/lib/dags.mjs cloneDags), falling back to dagu_change.
  const templates =
    argv.seed === 'mcp' ? settings.dags : Math.min(settings.dags, Math.max(50, Math.ceil(settings.dags / 40)));
  log(
    `seeding ${settings.dags} DAGs: ${templates} through dagu_change${templates < settings.dags ? ', the rest copied in SQL' : ''}`,
  );
  await seedDags(stack.mcpUrl, session, token, 0, templates);
  results.setup.seededThroughMcp = templates;
  if (templates < settings.dags) {
    try {
      const stored = await cloneDags(settings.databaseUrl, stack.schemas[0], settings.dags, templates);
      if (stored < settings.dags) throw new Error(`only ${stored} DAGs stored`);
      results.setup.seededInSql = settings.dags - templates;
    } catch (err) {
      log(`SQL seeding failed (${String(err?.message ?? err)}); storing the rest through dagu_change`);
      results.setup.sqlSeedError = String(err?.message ?? err);
      await seedDags(stack.mcpUrl, session, token, templates, settings.dags);
      results.setup.seededThroughMcp = settings.dags;
    }
  }
  await applyDags(stack.mcpUrl, session, token, [
    { name: 'bench-echo', spec: 'steps:\n  - name: hello\n    run: echo hello\n' },
    { name: 'bench-log', spec: `steps:\n  - name: spew\n    run: seq 1 ${settings.logLines}\n` },
    ...(['S8', 'S9', 'S10'].some((id) => only.has(id)) ? engineDags(settings) : []),
  ]);
  results.setup.seedSec = round((performance.now() - t1) / 1000);
  log(`seeded in ${results.setup.seedSec} s`);
  // The baseline answers with the stack's own results for the same DAGs.
  const names = Array.from({ length: settings.specNames }, (_, k) =>
    dagName(Math.floor((k * settings.dags) / settings.specNames)),
  );
  const payloads = {};
  for (const name of names) {
    const result = await rpc('tools/call', { name: 'dagu_read', arguments: { target: 'dag_spec', name } });
    if (result.isError === true)
      throw new Error(`dagu_read dag_spec ${name} failed: ${JSON.stringify(result.structuredContent)}`);
    payloads[name] = result;
  }
  results.setup.specNames = names.length;
  results.setup.specResultBytes = Math.round(
    Object.values(payloads).reduce((a, p) => a + JSON.stringify(p).length, 0) / names.length,
  );
  baseline = await startBaseline(payloads, join(os.tmpdir(), 'dagu-mcp-bench'));
  cpuPids.baseline = baseline.pid;
  return names;
}

/** S1–S3 and the baseline, in rounds, alternating the order so drift hits both sides alike. */
async function sideBySide(names) {
  const specCalls = names.map((name) => toolCall('dagu_read', { target: 'dag_spec', name }));
  const resourceReads = names.map((name) => ({
    method: 'resources/read',
    params: { uri: `dagu://dags/${name}/spec` },
  }));
  const pages = Math.max(1, Math.floor(settings.dags / 50));
  const dagPages = Array.from({ length: Math.min(pages, 200) }, (_, k) =>
    toolCall('dagu_read', { target: 'dags', query: `perPage=50&page=${k + 1}` }),
  );
  const { warmupSec, durationSec, connections } = settings;
  const timeout = (warmupSec + durationSec) * 1000 + 60_000;
  const auto = (url, headers, requests, breakdown) =>
    runLoad({ kind: 'autocannon', url, headers, requests, connections, warmupSec, durationSec }, timeout, breakdown);
  const seq = (url, headers, requests, breakdown) =>
    runLoad({ kind: 'sequential', url, headers, requests, warmupSec, durationSec }, timeout, breakdown);
  const specStages = { service: 'dag-service', op: 'dag.spec', mcpMethod: 'tools/call' };
  const baseHeaders = mcpHeaders({ protocolVersion: session.protocolVersion });
  // The same calls in the stateless revision (issue 22): no session, the envelope in `_meta`, the routing headers.
  // SEP-2243: dagu_read's `name` is mirrored as Mcp-Param-Name, per request.
  const modernCalls = specCalls.map((c) => ({
    ...c,
    params: { ...c.params, _meta: MODERN_META },
    headers: { 'mcp-param-name': c.params.arguments.name },
  }));
  const modernHeaders = {
    ...mcpHeaders({ token, protocolVersion: MODERN_VERSION }),
    'mcp-method': 'tools/call',
    'mcp-name': 'dagu_read',
  };
  const measurements = {
    b32: () => auto(baseline.url, baseHeaders, specCalls),
    s1: () => auto(stack.mcpUrl, stackHeaders(), specCalls, specStages),
    b1: () => seq(baseline.url, baseHeaders, specCalls),
    s2: () => seq(stack.mcpUrl, stackHeaders(), specCalls, specStages),
    m1: () => auto(stack.mcpUrl, modernHeaders, modernCalls),
    m2: () => seq(stack.mcpUrl, modernHeaders, modernCalls),
    s3r: () => auto(stack.mcpUrl, stackHeaders(), resourceReads, { ...specStages, mcpMethod: 'resources/read' }),
    s3d: () => auto(stack.mcpUrl, stackHeaders(), dagPages, { ...specStages, op: 'dag.list' }),
  };
  const enabled = new Set(['b32', 's1', 'm1']);
  if (only.has('S2')) ['b1', 's2', 'm2'].forEach((m) => enabled.add(m));
  if (only.has('S3')) ['s3r', 's3d'].forEach((m) => enabled.add(m));
  const cpuByMeasurement = {};
  for (let r = 1; r <= settings.rounds; r += 1) {
    const order =
      r % 2 === 1
        ? ['b32', 's1', 'm1', 'b1', 's2', 'm2', 's3r', 's3d']
        : ['m1', 's1', 'b32', 'm2', 's2', 'b1', 's3d', 's3r'];
    const row = { round: r };
    for (const m of order) {
      if (!enabled.has(m)) continue;
      row[m] = await measurements[m]();
      if (row[m].fatal) log(`round ${r} ${m}: ${row[m].fatal.split('\n')[0]}`);
      else
        log(
          `round ${r} ${m}: ${fmtRps(row[m].rps)} p50 ${fmtMs(row[m].latency?.p50)} p99 ${fmtMs(row[m].latency?.p99)}${errorNote(errorCount(row[m]))}`,
        );
      (cpuByMeasurement[m] ??= []).push(row[m].cpu ?? {});
    }
    row.ratios = {
      s1Throughput: ratio(row.s1?.rps, row.b32?.rps),
      s1P99: ratio(row.s1?.latency?.p99, row.b32?.latency?.p99),
      s2AddedP50:
        row.s2?.latency?.p50 !== undefined && row.b1?.latency?.p50 !== undefined
          ? row.s2.latency.p50 - row.b1.latency.p50
          : null,
      m1Throughput: ratio(row.m1?.rps, row.b32?.rps),
      m1P99: ratio(row.m1?.latency?.p99, row.b32?.latency?.p99),
      m2AddedP50:
        row.m2?.latency?.p50 !== undefined && row.b1?.latency?.p50 !== undefined
          ? row.m2.latency.p50 - row.b1.latency.p50
          : null,
      s3Resource: ratio(row.s3r?.rps, row.s1?.rps),
      s3ResourceP99: ratio(row.s3r?.latency?.p99, row.s1?.latency?.p99),
      s3DagsPage: ratio(row.s3d?.rps, row.s1?.rps),
      s3DagsPageP99: ratio(row.s3d?.latency?.p99, row.s1?.latency?.p99),
    };
    results.rounds.push(row);
  }
  const labels = {
    b32: `Baseline ${connections}c`,
    s1: `S1 stack ${connections}c`,
    b1: 'Baseline 1c',
    s2: 'S2 stack 1c',
    m1: `S1 stack 2026-07-28 ${connections}c`,
    m2: 'S2 stack 2026-07-28 1c',
    s3r: `S3 resources/read ${connections}c`,
    s3d: `S3 dags page ${connections}c`,
  };
  // Server-side CPU per answered request: every process of the side measured (not the load, not the machine).
  const serverCpuMs = (m, r) => {
    const u = r[m]?.cpu;
    if (u === undefined || !(r[m].rps > 0)) return undefined;
    const sum = ['baseline', 'mcp-gateway', 'dag-service', 'run-service', 'redis', 'postgres'].reduce(
      (a, c) => a + (u[c] ?? 0),
      0,
    );
    return (sum / 100 / r[m].rps) * 1000;
  };
  for (const [m, list] of Object.entries(cpuByMeasurement)) {
    results.cpu[labels[m]] = {
      ...Object.fromEntries(CPU_COLUMNS.map((c) => [c, median(list.map((u) => u[c]))])),
      cpuMsPerRequest: round(median(results.rounds.map((r) => serverCpuMs(m, r))), 3),
    };
  }
}

/** Median over rounds of a figure of measurement `m`. */
const med = (m, pick) => median(results.rounds.map((r) => (r[m] === undefined || r[m].fatal ? undefined : pick(r[m]))));
const medRatio = (key) => median(results.rounds.map((r) => r.ratios[key]));
const errorsOf = (m) => results.rounds.reduce((a, r) => a + (r[m] === undefined ? 0 : errorCount(r[m])), 0);
const fatalOf = (m) => results.rounds.map((r) => r[m]?.fatal).find((f) => f !== undefined);
const okOf = (m) => results.rounds.reduce((a, r) => a + (r[m]?.ok ?? 0), 0);

/** Throws when no round of `m` produced a successful answer (the scenario is then an error record). */
function requireOk(m) {
  if (okOf(m) > 0) return;
  const sample = results.rounds
    .map((r) => r[m]?.fatal ?? r[m]?.badSample ?? r[m]?.errorSample)
    .find((s) => s !== undefined);
  throw new Error(`no successful answer in any round (${errorsOf(m)} errors): ${sample ?? fatalOf(m) ?? 'no sample'}`);
}

function figuresOf(m) {
  return {
    rps: round(
      med(m, (x) => x.rps),
      1,
    ),
    p50: round(
      med(m, (x) => x.latency.p50),
      3,
    ),
    p90: round(
      med(m, (x) => x.latency.p90),
      3,
    ),
    p99: round(
      med(m, (x) => x.latency.p99),
      3,
    ),
    ok: okOf(m),
    errors: errorsOf(m),
    rounds: results.rounds.length,
    ...(results.rounds.some((r) => r[m]?.breakdown !== undefined)
      ? {
          breakdown: Object.fromEntries(
            BREAKDOWN_KEYS.map((k) => [
              k,
              round(
                med(m, (x) => x.breakdown?.[k]),
                3,
              ),
            ]),
          ),
        }
      : {}),
  };
}

const BREAKDOWN_KEYS = [
  'clientMs',
  'outsideGatewayMs',
  'gatewayHttpMs',
  'gatewayOwnMs',
  'busCallMs',
  'busTransportMs',
  'serviceHandlerMs',
];

async function sequentialJob(requests, { iterations, warmup = 3, timeoutMs = 60_000 }) {
  return runLoad(
    { kind: 'sequential', url: stack.mcpUrl, headers: stackHeaders(), requests, warmup, iterations, timeoutMs },
    (iterations + warmup) * timeoutMs + 60_000,
  );
}

/** Reads a run until its status is terminal; resolves with the last run data (or throws after `timeoutMs`). */
async function waitForRun(name, dagRunId, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const result = await rpc('tools/call', { name: 'dagu_read', arguments: { target: 'run', name, dagRunId } });
    const data = result.structuredContent?.data;
    if (result.isError !== true && TERMINAL.has(data?.statusLabel)) return data;
    if (Date.now() > until)
      throw new Error(
        `run ${dagRunId} not finished after ${timeoutMs} ms (${data?.statusLabel ?? JSON.stringify(result.structuredContent).slice(0, 200)})`,
      );
    await sleep(250);
  }
}

async function scenarios(names) {
  const c = settings.connections;
  await scenario('B', 'Baseline: plain SDK server, stateless, JSON (reference)', async () => {
    requireOk('b32');
    const b32 = figuresOf('b32');
    const b1 = only.has('S2') ? figuresOf('b1') : undefined;
    const checks = [
      {
        label: `${c} connections`,
        value: `${fmtRps(b32.rps)}, p50 ${fmtMs(b32.p50)}, p99 ${fmtMs(b32.p99)}${errorNote(b32.errors)}`,
        target: 'reference',
        met: null,
      },
    ];
    if (b1 !== undefined)
      checks.push({
        label: '1 connection',
        value: `p50 ${fmtMs(b1.p50)}, p99 ${fmtMs(b1.p99)}${errorNote(b1.errors)}`,
        target: 'reference',
        met: null,
      });
    return { figures: { c32: b32, c1: b1 }, checks };
  });
  await scenario('S1', `tools/call dagu_read dag_spec, full stack, ${c} connections, one session`, async () => {
    requireOk('s1');
    requireOk('m1');
    const f = figuresOf('s1');
    const throughput = medRatio('s1Throughput');
    const p99 = medRatio('s1P99');
    const m = figuresOf('m1');
    const mThroughput = medRatio('m1Throughput');
    const mP99 = medRatio('m1P99');
    return {
      figures: {
        ...f,
        throughputRatio: round(throughput, 3),
        p99Ratio: round(p99, 3),
        modern: { ...m, throughputRatio: round(mThroughput, 3), p99Ratio: round(mP99, 3) },
      },
      checks: [
        {
          label: 'throughput vs baseline',
          value: `${fmtRps(f.rps)} = ${fmtX(throughput)}${errorNote(f.errors)}`,
          target: '≥ 1.00×',
          met: throughput !== null && throughput >= 1.0 && f.errors === 0,
        },
        {
          label: 'p99 vs baseline',
          value: `${fmtMs(f.p99)} = ${fmtX(p99)} (p50 ${fmtMs(f.p50)})`,
          target: '≤ 1.20×',
          met: p99 !== null && p99 <= 1.2,
        },
        {
          label: '2026-07-28 (stateless): throughput vs baseline',
          value: `${fmtRps(m.rps)} = ${fmtX(mThroughput)}${errorNote(m.errors)}`,
          target: '≥ 1.00×',
          met: mThroughput !== null && mThroughput >= 1.0 && m.errors === 0,
        },
        {
          label: '2026-07-28 (stateless): p99 vs baseline',
          value: `${fmtMs(m.p99)} = ${fmtX(mP99)} (p50 ${fmtMs(m.p50)})`,
          target: '≤ 1.20×',
          met: mP99 !== null && mP99 <= 1.2,
        },
      ],
    };
  });
  await scenario('S2', 'The same at 1 connection', async () => {
    requireOk('s2');
    requireOk('m2');
    const f = figuresOf('s2');
    const added = medRatio('s2AddedP50');
    const m = figuresOf('m2');
    const mAdded = medRatio('m2AddedP50');
    return {
      figures: { ...f, addedP50Ms: round(added, 3), modern: { ...m, addedP50Ms: round(mAdded, 3) } },
      checks: [
        {
          label: 'added p50 over baseline p50',
          value: `+${fmtMs(added)} (p50 ${fmtMs(f.p50)}, p99 ${fmtMs(f.p99)})${errorNote(f.errors)}`,
          target: '≤ 0.5 ms',
          met: added !== null && added <= 0.5 && f.errors === 0,
        },
        {
          label: '2026-07-28 (stateless): added p50 over baseline p50',
          value: `+${fmtMs(mAdded)} (p50 ${fmtMs(m.p50)}, p99 ${fmtMs(m.p99)})${errorNote(m.errors)}`,
          target: '≤ 0.5 ms',
          met: mAdded !== null && mAdded <= 0.5 && m.errors === 0,
        },
      ],
    };
  });
  await scenario(
    'S3',
    `resources/read spec and dagu_read dags (page of 50 of ${settings.dags.toLocaleString('en-US')}), ${c} connections`,
    async () => {
      requireOk('s3r');
      requireOk('s3d');
      const r = figuresOf('s3r');
      const d = figuresOf('s3d');
      const rr = medRatio('s3Resource');
      const dr = medRatio('s3DagsPage');
      const dp99 = medRatio('s3DagsPageP99');
      return {
        figures: {
          resource: { ...r, ratioToS1: round(rr, 3), p99RatioToS1: round(medRatio('s3ResourceP99'), 3) },
          dagsPage: { ...d, ratioToS1: round(dr, 3), p99RatioToS1: round(medRatio('s3DagsPageP99'), 3) },
        },
        checks: [
          {
            label: 'resources/read dagu://dags/{name}/spec',
            value: `${fmtRps(r.rps)} = ${fmtX(rr)} of S1, p99 ${fmtMs(r.p99)}${errorNote(r.errors)}`,
            target: 'ratio to S1 (reported)',
            met: null,
          },
          {
            // Issue 28: a list page as fast as a point read: ≥ 0.8× S1's throughput, p99 ≤ 1.5× S1's.
            label: 'dagu_read dags perPage=50',
            value: `${fmtRps(d.rps)} = ${fmtX(dr)} of S1, p99 ${fmtMs(d.p99)} = ${fmtX(dp99)} of S1's${errorNote(d.errors)}`,
            target: '≥ 0.80× of S1, p99 ≤ 1.50× of S1',
            met: Number.isFinite(dr) && Number.isFinite(dp99) && dr >= 0.8 && dp99 <= 1.5 && d.errors === 0,
          },
        ],
      };
    },
  );
  await scenario('S4', `dag_search over ${settings.dags.toLocaleString('en-US')} DAGs, 1 connection`, async () => {
    const terms = ['nightly', 'rsync -a', `batch-b${Math.floor(settings.dags / 2)}`, 'no-such-token-xyz'];
    const hits = {};
    for (const search of terms) {
      const result = await rpc('tools/call', { name: 'dagu_read', arguments: { target: 'dag_search', search } });
      if (result.isError === true)
        throw new Error(`dag_search "${search}" failed: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
      hits[search] = {
        results: result.structuredContent?.data?.results?.length ?? null,
        hasMore: result.structuredContent?.data?.hasMore ?? null,
      };
    }
    const r = await sequentialJob(
      terms.map((search) => toolCall('dagu_read', { target: 'dag_search', search })),
      { iterations: settings.searchIterations, warmup: terms.length * 2 },
    );
    if (r.fatal) throw new Error(r.fatal);
    const p50 = r.latency.p50;
    return {
      figures: { terms: hits, ...r.latency, errors: r.errors, cpu: r.cpu },
      checks: [
        {
          label: `p50 over ${terms.length} terms (${r.latency.count} calls)`,
          value: `${fmtMs(p50)} (p99 ${fmtMs(r.latency.p99)})${errorNote(errorCount(r))}`,
          target: '< 100 ms',
          met: p50 !== null && p50 < 100 && errorCount(r) === 0,
        },
      ],
    };
  });
  await scenario('S5', 'dagu_execute start wait=true, one-step echo DAG', async (record) => {
    const start = toolCall('dagu_execute', {
      action: 'start',
      name: 'bench-echo',
      wait: true,
      waitTimeoutSeconds: 120,
    });
    const checks = [];
    record.checks = checks;
    const seqResult = await sequentialJob([start], {
      iterations: settings.execIterations,
      warmup: smoke ? 1 : 3,
      timeoutMs: 150_000,
    });
    record.figures.sequential = seqResult;
    const seqErrors = errorCount(seqResult);
    checks.push({
      label: `p50 of ${settings.execIterations} runs, one at a time`,
      value: seqResult.fatal
        ? `load failed: ${seqResult.fatal.slice(0, 100)}`
        : `${fmtMs(seqResult.latency.p50)} (p99 ${fmtMs(seqResult.latency.p99)})${errorNote(seqErrors)}${seqErrors > 0 && seqResult.errorSample ? ` e.g. ${seqResult.errorSample.slice(0, 120)}` : ''}`,
      target: '< 150 ms',
      met: !seqResult.fatal && seqResult.latency.p50 !== null && seqResult.latency.p50 < 150 && seqErrors === 0,
    });
    // The burst: `burst` starts at once on as many connections, all in the one session.
    const burstStart = toolCall('dagu_execute', {
      action: 'start',
      name: 'bench-echo',
      wait: true,
      waitTimeoutSeconds: 300,
    });
    const t0 = performance.now();
    const burst = await runLoad(
      {
        kind: 'burst',
        url: stack.mcpUrl,
        headers: stackHeaders(),
        requests: [burstStart],
        count: settings.burst,
        timeoutMs: 330_000,
      },
      400_000,
    );
    if (burst.fatal) throw new Error(burst.fatal);
    // Runs whose wait ended before they did are followed until they finish.
    const finals = await Promise.all(
      burst.runs.map(async (run) => {
        if (run.dagRunId === undefined) return { label: run.cls, at: null };
        if (TERMINAL.has(run.statusLabel) && run.completed === true) return { label: run.statusLabel, at: null };
        try {
          const data = await waitForRun('bench-echo', run.dagRunId, 300_000);
          return { label: data.statusLabel, at: performance.now() - t0 };
        } catch (err) {
          return { label: 'unfinished', at: null, error: String(err) };
        }
      }),
    );
    const byStatus = {};
    for (const f of finals) byStatus[f.label] = (byStatus[f.label] ?? 0) + 1;
    const polledDone = finals.map((f) => f.at).filter((a) => a !== null);
    const drainMs = Math.max(burst.answeredMs, ...polledDone);
    const succeeded = byStatus.succeeded ?? 0;
    record.figures.burst = {
      count: settings.burst,
      answeredMs: burst.answeredMs,
      drainMs,
      byStatus,
      classes: burst.classes,
      latency: burst.latency,
      errorSample: burst.errorSample,
    };
    checks.push({
      label: `${settings.burst} started at once: all finish, drain time`,
      value: `${succeeded}/${settings.burst} succeeded, drained in ${fmtMs(drainMs)} (answer p50 ${fmtMs(burst.latency.p50)})${succeeded < settings.burst ? ` — ${JSON.stringify(byStatus)}${burst.errorSample ? ` e.g. ${burst.errorSample.slice(0, 120)}` : ''}` : ''}`,
      target: 'all finish (drain reported)',
      met: succeeded === settings.burst,
    });
    return { figures: record.figures, checks };
  });
  await scenario(
    'S6',
    `${settings.sseStreams.toLocaleString('en-US')} idle GET SSE streams on one gateway replica`,
    async () => {
      const r = await runLoad(
        {
          kind: 'sse',
          url: stack.mcpUrl,
          token,
          streams: settings.sseStreams,
          holdSec: settings.sseHoldSec,
          keepAliveMs: settings.sseKeepAliveMs,
          gatewayPid: stack.pids['mcp-gateway'],
        },
        settings.sseHoldSec * 1000 + 600_000,
      );
      if (r.fatal) throw new Error(r.fatal);
      const rss = Math.max(r.memory.peakMb ?? 0, r.memory.endOfHoldMb ?? 0, r.memory.afterOpenMb ?? 0);
      const allOpen = r.streamsOpen === settings.sseStreams;
      const onTime = r.streamsOpen > 0 && r.streamsLate === 0;
      return {
        figures: r,
        checks: [
          {
            label: 'streams open and held',
            value: `${r.streamsOpen}/${settings.sseStreams} open for ${round(r.holdSec, 0)} s, ${r.closedEarly} closed early; statuses ${JSON.stringify(r.statusCounts)}${r.sessionErrors > 0 ? `; ${r.sessionErrors} sessions refused: ${String(r.sessionErrorSample).slice(0, 100)}` : ''}`,
            target: `${settings.sseStreams} held`,
            met: allOpen && r.closedEarly === 0,
          },
          {
            label: `keep-alives on time (every ≤ ${settings.sseKeepAliveMs / 1000} s +20 %)`,
            value: `${r.streamsLate} of ${r.streamsOpen} streams late or silent; gap p50 ${fmtMs(r.gapMs.p50)}, max ${fmtMs(r.gapMs.max)}; ${r.keepAlivesReceived} comments`,
            target: 'none late',
            met: onTime,
          },
          {
            label: 'gateway RSS with the streams open',
            value: `${fmt0(rss)} MB (before ${fmt0(r.memory.beforeMb)} MB, with sessions ${fmt0(r.memory.afterSessionsMb)} MB)`,
            target: '< 300 MB',
            met: r.streamsOpen > 0 && rss < 300,
          },
        ],
      };
    },
  );
  await scenario(
    'S7',
    `Log capture and reads: ${settings.logLines.toLocaleString('en-US')}-line step`,
    async (record) => {
      const checks = [];
      record.checks = checks;
      const t0 = performance.now();
      const started = await rpc(
        'tools/call',
        {
          name: 'dagu_execute',
          arguments: { action: 'start', name: 'bench-log', wait: true, waitTimeoutSeconds: 300 },
        },
        330_000,
      );
      const sc = started.structuredContent ?? {};
      if (started.isError === true || typeof sc.dagRunId !== 'string')
        throw new Error(`dagu_execute bench-log failed: ${JSON.stringify(sc).slice(0, 400)}`);
      const run =
        sc.completed === true
          ? (sc.run ?? (await waitForRun('bench-log', sc.dagRunId, 300_000)))
          : await waitForRun('bench-log', sc.dagRunId, 300_000);
      const captureMs = performance.now() - t0;
      const runMs = run.startedAt && run.finishedAt ? Date.parse(run.finishedAt) - Date.parse(run.startedAt) : null;
      record.figures.capture = { wallMs: round(captureMs, 1), runMs, status: run.statusLabel ?? sc.statusLabel };
      checks.push({
        label: 'capture: run of the step, start to finish',
        value: `${fmtMs(captureMs)} wall (run ${runMs === null ? '—' : `${runMs} ms`}), ${run.statusLabel ?? sc.statusLabel}`,
        target: 'reported',
        met: null,
      });
      const n = settings.logLines;
      const reads = [
        { label: 'tail=100', query: 'tail=100', first: String(n - 99), last: String(n) },
        {
          label: `offset=${n / 2}&limit=100`,
          query: `offset=${n / 2}&limit=100`,
          first: String(n / 2),
          last: String(n / 2 + 99),
        },
        { label: 'head=100', query: 'head=100', first: '1', last: '100' },
      ];
      record.figures.reads = {};
      for (const read of reads) {
        const args = {
          target: 'step_log',
          name: 'bench-log',
          dagRunId: sc.dagRunId,
          stepName: 'spew',
          query: read.query,
        };
        const once = await rpc('tools/call', { name: 'dagu_read', arguments: args });
        const data = once.structuredContent?.data ?? {};
        const lines = String(data.stdoutContent ?? '')
          .split('\n')
          .filter((l) => l !== '');
        const correct = once.isError !== true && lines[0] === read.first && lines[lines.length - 1] === read.last;
        const r = await sequentialJob([toolCall('dagu_read', args)], { iterations: settings.logReads, warmup: 2 });
        record.figures.reads[read.label] = {
          correct,
          totalLines: data.totalLines ?? null,
          lineCount: data.lineCount ?? null,
          ...(r.fatal ? { fatal: r.fatal } : { latency: r.latency, errors: r.errors }),
          sample: correct ? undefined : JSON.stringify(once.structuredContent ?? once).slice(0, 300),
        };
        checks.push({
          label: `step_log ${read.label}`,
          value: r.fatal
            ? `load failed: ${r.fatal.slice(0, 100)}`
            : `p50 ${fmtMs(r.latency.p50)}, p99 ${fmtMs(r.latency.p99)}${errorNote(errorCount(r))}${correct ? '' : ' — wrong lines returned'}`,
          target: '< 100 ms',
          met: !r.fatal && r.latency.p50 !== null && r.latency.p50 < 100 && correct && errorCount(r) === 0,
        });
      }
      return { figures: record.figures, checks };
    },
  );
}

// ---------------------------------------------------------------- engine scenarios (S8–S10)

/**
 * Starts `count` runs of `dag` at once (`dagu_execute start`, no wait) over `connections`
 * connections and waits for all of them to end. Accept time is the client's (last start
 * answered); finish time is the engine's own rows (first `created_at` → last `finished_at`).
 */
async function startMany(dag, count, connections = settings.connections) {
  const burst = await runLoad(
    { kind: 'burst', url: stack.mcpUrl, headers: stackHeaders(), requests: [startCall(dag)], count, connections },
    600_000,
  );
  if (burst.fatal) throw new Error(burst.fatal);
  const ids = burst.runs.map((r) => r.dagRunId).filter((id) => typeof id === 'string');
  if (ids.length < count)
    throw new Error(`${count - ids.length} of ${count} starts refused: ${String(burst.errorSample).slice(0, 200)}`);
  const drained = await drainRuns(settings.databaseUrl, stack.schemaOf('run-service'), dag, ids);
  return {
    count,
    acceptMs: burst.answeredMs,
    finishMs: drained.spanMs,
    runsPerSec: (count / drained.spanMs) * 1000,
    succeeded: drained.succeeded,
    byStatus: drained.byStatus,
  };
}

/**
 * The machine's cost of starting a step process, measured now: `sh -c true`
 * spawned `count` times one after another from this (small) Node process,
 * detached, with piped output, as a step is. Context for S9: the same chain
 * costs more on a machine where this costs more.
 *
 * @returns ms per start (mean)
 */
async function spawnFloorMs(count) {
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    await new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', 'true'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.resume();
      child.stderr.resume();
      child.on('error', reject);
      child.on('close', resolve);
    });
  }
  return (performance.now() - started) / count;
}

const medianOf = (rows, pick) => median(rows.map(pick).filter((v) => Number.isFinite(v)));

async function engineScenarios(names) {
  await scenario('S8', 'engine throughput: one-step runs started at once', async (record) => {
    const checks = [];
    record.checks = checks;
    for (const replicas of settings.engineReplicas) {
      const extra = replicas === 2 ? await stack.addReplica('run-service') : undefined;
      if (extra) cpuPids['run-service#2'] = extra.pid;
      try {
        for (const count of settings.engineCounts) {
          const rounds = [];
          // One burst first, not recorded: the rounds measure warm processes (JIT-compiled start and
          // engine paths, open pool connections), as S1's autocannon warm-up does for reads.
          await startMany('bench-true', Math.min(count, 100));
          for (let r = 0; r < settings.engineRounds; r += 1) rounds.push(await startMany('bench-true', count));
          const key = `n${count}x${replicas}`;
          record.figures[key] = rounds;
          const accept = medianOf(rounds, (x) => x.acceptMs);
          const finish = medianOf(rounds, (x) => x.finishMs);
          const rate = medianOf(rounds, (x) => x.runsPerSec);
          const allOk = rounds.every((x) => x.succeeded === count);
          const goal = count === 100 && replicas === 1;
          checks.push({
            label: `${count} runs, ${replicas} run-service replica${replicas > 1 ? 's' : ''}: accept / finish / runs/s`,
            value: `accepted in ${fmtMs(accept)}, finished in ${fmtMs(finish)}, ${round(rate, 1)} runs/s${allOk ? '' : ` — ${JSON.stringify(rounds.map((x) => x.byStatus))}`}`,
            target: goal ? '≥ 100 runs/s, accept ≤ 300 ms' : 'all succeed (reported)',
            met: goal ? allOk && rate >= 100 && accept <= 300 : allOk,
          });
        }
      } finally {
        if (extra) {
          await extra.stop();
          delete cpuPids['run-service#2'];
        }
      }
    }
    return { figures: record.figures, checks };
  });

  await scenario('S9', 'step overhead: a chain and a foreach', async (record) => {
    const timeline = async (dag) => {
      const started = await rpc('tools/call', { name: 'dagu_execute', arguments: { action: 'start', name: dag } });
      const id = started.structuredContent?.dagRunId;
      if (typeof id !== 'string') throw new Error(`start ${dag}: ${JSON.stringify(started).slice(0, 300)}`);
      await drainRuns(settings.databaseUrl, stack.schemaOf('run-service'), dag, [id]);
      return runTimeline(settings.databaseUrl, stack.schemaOf('run-service'), dag, id);
    };
    const chains = [];
    const loops = [];
    const floors = [];
    for (let r = 0; r < settings.engineRounds; r += 1) {
      floors.push(await spawnFloorMs(settings.chainSteps));
      chains.push(await timeline('bench-chain'));
      loops.push(await timeline('bench-foreach'));
    }
    record.figures = { chain: chains, foreach: loops, spawnFloorMs: floors };
    const perStep = medianOf(chains, (x) => x.runMs / settings.chainSteps);
    const loopMs = medianOf(loops, (x) => x.runMs);
    const floor = median(floors);
    return {
      figures: record.figures,
      checks: [
        {
          label: `the machine's floor: sh -c true started ${settings.chainSteps}× in a row from Node (pipes, detached)`,
          value: `${fmtMs(floor)} per start; the chain's step is ${round(perStep / floor, 2)}× it`,
          target: 'context (the OS cost of a step)',
          met: null,
        },
        {
          label: `type: chain of ${settings.chainSteps} true steps, ms per step (run created → ended)`,
          value: `${fmtMs(perStep)} per step (run ${fmtMs(medianOf(chains, (x) => x.runMs))}; ${chains.every((x) => x.status === 4) ? 'succeeded' : `status ${chains.map((x) => x.status)}`})`,
          target: '≤ 2.5 ms/step',
          met: chains.every((x) => x.status === 4) && perStep <= 2.5,
        },
        {
          label: `foreach over ${settings.foreachItems} items, max_concurrent 16`,
          value: `${fmtMs(loopMs)} (${round((settings.foreachItems / loopMs) * 1000, 0)} items/s; ${loops.every((x) => x.status === 4) ? 'succeeded' : `status ${loops.map((x) => x.status)}`})`,
          target: settings.foreachItems === 500 ? '≤ 1 s' : 'reported',
          met: loops.every((x) => x.status === 4) && (settings.foreachItems !== 500 || loopMs <= 1000),
        },
      ],
    };
  });

  await scenario('S10', 'mixed load: S1 reads at 70 % of capacity while S8 runs', async (record) => {
    const specCalls = names.map((name) => toolCall('dagu_read', { target: 'dag_spec', name }));
    const read = (durationSec, overallRate) =>
      runLoad(
        {
          kind: 'autocannon',
          url: stack.mcpUrl,
          headers: stackHeaders(),
          requests: specCalls,
          connections: settings.connections,
          warmupSec: 0,
          durationSec,
          ...(overallRate !== undefined ? { overallRate } : {}),
        },
        durationSec * 1000 + 120_000,
      );
    // Capacity: S1's median when it ran in this run, else a closed-loop probe now.
    const capacity = only.has('S1') && okOf('s1') > 0 ? figuresOf('s1').rps : (await read(settings.durationSec)).rps;
    const rate = Math.max(1, Math.round(capacity * 0.7));
    const alone = await read(settings.mixedReadSec, rate);
    if (alone.fatal) throw new Error(alone.fatal);
    const count = settings.engineCounts[0];
    const engineAlone = await startMany('bench-true', count);
    const mixedRead = read(settings.mixedReadSec, rate);
    await sleep(1000);
    const engineMixed = await startMany('bench-true', count);
    const mixed = await mixedRead;
    if (mixed.fatal) throw new Error(mixed.fatal);
    record.figures = { capacity, rate, alone, mixed, engineAlone, engineMixed };
    return {
      figures: record.figures,
      checks: [
        {
          label: `reads at ${rate} req/s (70 % of ${round(capacity, 0)}): p99 alone → with ${count} runs`,
          value: `${fmtMs(alone.latency.p99)} → ${fmtMs(mixed.latency.p99)} (${round(mixed.latency.p99 / alone.latency.p99, 2)}×; served ${round(mixed.rps, 0)} req/s${errorNote(errorCount(mixed))})`,
          target: 'reported',
        },
        {
          label: `${count} runs: runs/s alone → under the read load`,
          value: `${round(engineAlone.runsPerSec, 1)} → ${round(engineMixed.runsPerSec, 1)} runs/s (${engineMixed.succeeded}/${count} succeeded)`,
          target: 'all succeed',
          met: engineMixed.succeeded === count && engineAlone.succeeded === count,
        },
      ],
    };
  });
}

const fmt0 = (v) => (typeof v === 'number' && Number.isFinite(v) ? String(Math.round(v)) : '—');

/** Writes the JSON and Markdown results (and BENCHMARKS.md's generated section on a full run). */
function writeResults() {
  mkdirSync(outDir, { recursive: true });
  const md = markdownReport(results);
  const json = JSON.stringify(results, null, 2);
  const written = [];
  if (smoke) {
    writeFileSync(join(outDir, 'smoke.json'), json);
    writeFileSync(join(outDir, 'smoke.md'), md);
    written.push(join(outDir, 'smoke.json'));
  } else {
    const stamp = results.startedAt.replace(/[:.]/g, '-').slice(0, 19);
    const partial = argv.only !== undefined ? '-partial' : '';
    writeFileSync(join(outDir, `${stamp}${partial}.json`), json);
    writeFileSync(join(outDir, `${stamp}${partial}.md`), md);
    writeFileSync(join(outDir, `latest${partial}.json`), json);
    writeFileSync(join(outDir, `latest${partial}.md`), md);
    written.push(join(outDir, `${stamp}${partial}.json`), join(outDir, `${stamp}${partial}.md`));
  }
  if (writeBenchmarksMd) {
    const file = join(ROOT, 'BENCHMARKS.md');
    const current = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmarks\n\n${MARK_START}\n${MARK_END}\n`;
    const s = current.indexOf(MARK_START);
    const e = current.indexOf(MARK_END);
    const body = `${MARK_START}\n${md}\n${MARK_END}`;
    writeFileSync(
      file,
      s >= 0 && e > s
        ? current.slice(0, s) + body + current.slice(e + MARK_END.length)
        : `${current.trimEnd()}\n\n${body}\n`,
    );
    written.push(file);
  }
  return written;
}

async function main() {
  let failed = false;
  let names;
  try {
    names = await setup();
  } catch (err) {
    results.setup.error = String(err?.stack ?? err);
    log(`setup failed: ${String(err?.message ?? err).split('\n')[0]}`);
    failed = true;
  }
  if (names !== undefined) {
    try {
      if (sideBySideSelected) await sideBySide(names);
    } catch (err) {
      results.setup.roundsError = String(err?.stack ?? err);
      log(`rounds failed: ${err}`);
    }
    await scenarios(names);
    await engineScenarios(names);
  } else {
    for (const id of [...(sideBySideSelected ? ['B'] : []), ...settings.scenarios])
      results.scenarios.push({
        id,
        title: id,
        status: 'error',
        error: `setup failed: ${results.setup.error}`,
        figures: {},
        checks: [],
      });
  }
  results.stackAlive =
    stack === undefined
      ? null
      : Object.fromEntries(
          ['dag-service', 'run-service', 'wiki-service', 'agent-service', 'mcp-gateway'].map((a) => [
            a,
            stack.alive(a),
          ]),
        );
  if (stack !== undefined && Object.values(results.stackAlive).includes(false))
    results.stackOutput = stack.output().slice(-8000);
  if (session !== undefined) await closeSession(stack.mcpUrl, session, { token, agent: setupAgent });
  setupAgent.destroy();
  await baseline?.stop().catch(() => undefined);
  await stack?.stop().catch((err) => log(`stack stop: ${err}`));
  results.finishedAt = new Date().toISOString();
  results.machine.loadAverageAtEnd = os.loadavg().map((v) => round(v, 2));
  const written = writeResults();
  process.stdout.write(`\n${consoleTable(results)}\n\n`);
  log(`results: ${written.join(', ')}`);
  const expected = [...(sideBySideSelected ? ['B'] : []), ...settings.scenarios];
  const missing = expected.filter((id) => !results.scenarios.some((s) => s.id === id));
  if (missing.length > 0) {
    log(`no record for ${missing.join(', ')}`);
    failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  log(`harness failed: ${err?.stack ?? err}`);
  process.exitCode = 1;
});
