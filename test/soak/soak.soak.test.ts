/**
 * Soak (issue 18): mixed load — reads, applies, runs with their logs (waited
 * on over SSE with a progress token), SSE GET streams opened and closed — at
 * about 70 % of the capacity measured at the start, for `SOAK_SECONDS`
 * (default 600; the fault run uses 120), on the suite's own Redis and
 * PostgreSQL. Every 10 s it samples each process's memory and open file
 * descriptors, the Redis key count and the PostgreSQL connections, and
 * reports first/last values and slopes. It fails on any error answer and on
 * growth past the bounds below, measured after a warm-up (the SSE event
 * retention, shortened to 20 s here, fills Redis to its plateau). Redis keys
 * that carry a TTL (event streams, one-time relay claims of 10 min) grow
 * until their TTL and clean themselves up; the bound is on keys without one.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient } from '../e2e/stack';
import { report, sleep, startFaultEnv, type FaultEnv } from '../faults/fault-env';
import { callTool, summarize, type Outcome } from '../faults/load';
import { keyShapes, openFds, rssMiB, slope, storeCounts, type SoakSample } from './soak-metrics';

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const WORKERS = 4;
const WARMUP_SECONDS = Math.min(40, SOAK_SECONDS / 4);
/** Growth bounds from the first sample after warm-up to the last (stated in docs/reliability.md). */
const BOUNDS = { rssMiB: 64, fds: 25, persistentKeys: 20, pgConnections: 5 };
/** How long the PostgreSQL count may take to settle after the load: pg-pool's 10 s idle timeout, plus margin. */
const PG_IDLE_SETTLE_MS = 15_000;

let env: FaultEnv;

beforeAll(async () => {
  env = await startFaultEnv({ env: { LOG_LEVEL: 'warn', SSE_EVENT_RETENTION_MS: '20000' } });
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

/** One op of the mix, by turn: read, apply (20 names in rotation), run + logs, SSE GET stream, REST read. */
async function soakOp(client: Client, turn: number): Promise<Outcome> {
  const kind = turn % 5;
  if (kind === 0) return callTool(client, 'read', 'dagu_read', { target: 'dags' }, () => true);
  if (kind === 1)
    return callTool(
      client,
      'apply',
      'dagu_change',
      { mode: 'apply', name: `soak-d${turn % 20}`, spec: 'steps:\n  - run: echo soak\n' },
      (r) => r.structuredContent?.applied === true,
    );
  if (kind === 2) return runWithLogs(client);
  if (kind === 3) return sseStream(client);
  return callTool(client, 'read-runs', 'dagu_read', { target: 'runs', query: 'name=soak-run' }, () => true);
}

async function runWithLogs(client: Client): Promise<Outcome> {
  const started = Date.now();
  let dagRunId: string;
  try {
    const run = await client.request(
      {
        method: 'tools/call',
        params: { name: 'dagu_execute', arguments: { action: 'start', name: 'soak-run', wait: true } },
      },
      CallToolResultSchema,
      { timeout: 30_000, onprogress: () => undefined },
    );
    if (run.isError === true || run.structuredContent?.status !== 4)
      return { op: 'run', kind: 'wrong', ms: Date.now() - started, detail: JSON.stringify(run).slice(0, 200) };
    dagRunId = String(run.structuredContent.dagRunId);
  } catch (err) {
    return { op: 'run', kind: 'wrong', ms: Date.now() - started, detail: String(err) };
  }
  return callTool(client, 'run-logs', 'dagu_read', { target: 'run_logs', name: 'soak-run', dagRunId }, () => true);
}

/** Opens the session's GET stream, reads for 300 ms, closes it. */
async function sseStream(client: Client): Promise<Outcome> {
  const started = Date.now();
  const transport = client.transport as StreamableHTTPClientTransport | undefined;
  const controller = new AbortController();
  try {
    const res = await fetch(env.stack.mcpUrl, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': transport?.sessionId ?? '',
        'mcp-protocol-version': transport?.protocolVersion ?? '2025-06-18',
      },
      signal: controller.signal,
    });
    if (res.status !== 200) return { op: 'sse', kind: 'wrong', ms: Date.now() - started, detail: String(res.status) };
    await sleep(300);
    controller.abort();
    return { op: 'sse', kind: 'ok', ms: Date.now() - started };
  } catch (err) {
    return { op: 'sse', kind: 'wrong', ms: Date.now() - started, detail: String(err) };
  }
}

/** Runs the mix with `workers` clients for `seconds`; `intervalMs` paces each worker (0: as fast as it can). */
async function drive(clients: readonly Client[], seconds: number, intervalMs: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (client, w) => {
      for (let turn = w; Date.now() < until; turn++) {
        const began = Date.now();
        outcomes.push(await soakOp(client, turn));
        const rest = intervalMs - (Date.now() - began);
        if (rest > 0) await sleep(rest);
      }
    }),
  );
  return outcomes;
}

async function sample(t: number): Promise<SoakSample> {
  const rss: Record<string, number> = {};
  const fds: Record<string, number> = {};
  for (const app of ['mcp-gateway', 'dag-service', 'run-service', 'wiki-service'] as const)
    for (const [i, child] of env.stack.processesOf(app).entries()) {
      if (child.pid === undefined) continue;
      rss[`${app}#${i}`] = rssMiB(child.pid);
      fds[`${app}#${i}`] = openFds(child.pid);
    }
  return { t, rssMiB: rss, fds, ...(await storeCounts(env.redis.url, env.pg.url)) };
}

test(
  `${SOAK_SECONDS} s of mixed load at ~70 % of capacity: zero errors, memory, handles, keys and connections flat`,
  async () => {
    const clients = await Promise.all(Array.from({ length: WORKERS }, () => connectClient(env.stack.mcpUrl)));
    const applied = await clients[0]?.callTool({
      name: 'dagu_change',
      arguments: { mode: 'apply', name: 'soak-run', spec: 'steps:\n  - run: echo soak run\n' },
    });
    expect(applied?.isError).toBeFalsy();
    const probe = await drive(clients, 15, 0);
    expect(summarize(probe).samples).toEqual([]);
    const capacity = probe.length / 15; // ops/s with every worker busy
    const intervalMs = (WORKERS / (0.7 * capacity)) * 1000;

    const samples: SoakSample[] = [];
    const started = Date.now();
    const sampler = setInterval(() => void sample((Date.now() - started) / 1000).then((s) => samples.push(s)), 10_000);
    samples.push(await sample(0));
    const shapesAtStart = await keyShapes(env.redis.url);
    const outcomes = await drive(clients, SOAK_SECONDS, intervalMs);
    clearInterval(sampler);
    samples.push(await sample((Date.now() - started) / 1000));
    await Promise.all(clients.map((c) => c.close()));

    const summary = summarize(outcomes);
    const steady = samples.filter((s) => s.t >= WARMUP_SECONDS);
    const first = steady[0] ?? samples[0];
    const last = samples.at(-1);
    if (first === undefined || last === undefined) throw new Error('no samples');
    const perMinute = (series: (s: SoakSample) => number): number =>
      slope(steady.map((s) => [s.t / 60, series(s)] as const));
    const figures: Record<string, string> = {};
    const growth: Record<string, number> = {};
    for (const name of Object.keys(last.rssMiB)) {
      const rss = (s: SoakSample): number => s.rssMiB[name] ?? Number.NaN;
      const fd = (s: SoakSample): number => s.fds[name] ?? Number.NaN;
      figures[name] =
        `rss ${rss(first).toFixed(0)}→${rss(last).toFixed(0)} MiB (${perMinute(rss).toFixed(2)}/min), ` +
        `fds ${fd(first)}→${fd(last)} (${perMinute(fd).toFixed(2)}/min)`;
      growth[`${name} rss`] = rss(last) - rss(first) > BOUNDS.rssMiB ? rss(last) - rss(first) : 0;
      growth[`${name} fds`] = fd(last) - fd(first) > BOUNDS.fds ? fd(last) - fd(first) : 0;
    }
    figures.redis =
      `keys ${first.redisKeys}→${last.redisKeys} (${perMinute((s) => s.redisKeys).toFixed(1)}/min; all with a TTL but ` +
      `${first.persistentKeys}→${last.persistentKeys}, ${perMinute((s) => s.persistentKeys).toFixed(1)}/min)`;
    figures.redisShapes = `start ${JSON.stringify(shapesAtStart)} end ${JSON.stringify(await keyShapes(env.redis.url))}`;
    // A pool opens connections up to its size when the load peaks and closes them after 10 s
    // idle (pg-pool's idleTimeoutMillis): the peak is not a leak. A leaked client or pool keeps
    // its connection, so the count is read again once the pools had that time to settle.
    let settledConnections = last.pgConnections;
    const settleUntil = Date.now() + PG_IDLE_SETTLE_MS;
    while (settledConnections - first.pgConnections > BOUNDS.pgConnections && Date.now() < settleUntil) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      settledConnections = (await storeCounts(env.redis.url, env.pg.url)).pgConnections;
    }
    figures.postgres = `connections ${first.pgConnections}→${last.pgConnections} (settled ${settledConnections})`;
    process.stdout.write(
      `soak: ${SOAK_SECONDS} s, capacity ${capacity.toFixed(1)} ops/s, ran at ${((WORKERS * 1000) / intervalMs).toFixed(1)} ops/s target, ` +
        `${outcomes.length} ops (${summary.ok} ok)\n${JSON.stringify(figures, null, 2)}\n`,
    );
    report({
      fault: `soak ${SOAK_SECONDS} s at ~70 % of ${capacity.toFixed(1)} ops/s`,
      guarantee: 'zero errors; memory, fds, Redis keys, PostgreSQL connections flat',
      test: 'test/soak/soak.soak.test.ts',
      recoveryMs: undefined,
      boundMs: 0,
      calls: `${outcomes.length} ops, ${summary.ok} ok; ${JSON.stringify(figures)}`,
    });

    expect({ errors: outcomes.length - summary.ok, samples: summary.samples }).toEqual({ errors: 0, samples: [] });
    expect(Object.entries(growth).filter(([, g]) => g > 0)).toEqual([]);
    expect(last.persistentKeys - first.persistentKeys).toBeLessThanOrEqual(BOUNDS.persistentKeys);
    expect(settledConnections - first.pgConnections).toBeLessThanOrEqual(BOUNDS.pgConnections);
    expect(env.crashes()).toEqual([]);
  },
  (SOAK_SECONDS + 300) * 1000,
);
