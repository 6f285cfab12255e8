/**
 * The load process: runs one load job against a server and prints its result
 * as one JSON line on stdout (prefixed `RESULT `). The orchestrator (run.mjs)
 * spawns one per measurement, so the load never shares an event loop with a
 * server or with the orchestrator.
 *
 *   node bench/lib/load.mjs '<job JSON>'
 *
 * Job kinds:
 * - `autocannon`: N keep-alive connections, closed loop, fixed warm-up then a
 *   timed run; every request gets a distinct JSON-RPC id (setupRequest);
 *   latencies are kept exactly (float ms from autocannon's `response` events),
 *   answers are checked for a JSON-RPC result that is not a tool error.
 * - `sequential`: one keep-alive connection, one request at a time, exact
 *   per-request latencies and a full parse of every answer (JSON or SSE).
 * - `burst`: `count` requests sent at once on `count` connections (or at most
 *   `connections`); drain time and each answer's run reference.
 * - `autocannon` with `overallRate`: an open-loop rate (requests/s over all
 *   connections) instead of a closed loop (S10's read load at 70 % of S1).
 * - `sse`: opens `streams` sessions and one idle GET stream on each, holds
 *   them, times the keep-alive comments and samples the gateway's RSS.
 *
 * `job.requests` are `{method, params, headers?}`: a request's own `headers` are sent on top of
 * `job.headers` (2026-07-28's per-call `Mcp-Param-*` headers, SEP-2243).
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { summarize } from './stats.mjs';
import { classify, closeSession, keepAliveAgent, mcpHeaders, openSession, request, responseTo } from './mcp-http.mjs';

const job = JSON.parse(process.argv[2]);

/** The body of request number `n`: a JSON-RPC request whose method+params come from `variants[n % len]`. */
function bodyFor(variants, n) {
  return `{"jsonrpc":"2.0","id":${n},${variants[n % variants.length]}`;
}

/** Turns `{method, params}` objects into the body tails `bodyFor` appends to the id. */
function tails(requests) {
  return requests.map((r) => JSON.stringify({ method: r.method, params: r.params }).slice(1));
}

async function runAutocannon() {
  const variants = tails(job.requests);
  const url = new URL(job.url);
  let next = 1;
  let counting = false;
  const counts = { ok: 0, bad: 0, non2xx: 0 };
  let badSample;
  const samples = [];
  const options = (duration) => ({
    url: url.origin,
    connections: job.connections,
    duration,
    pipelining: 1,
    ...(job.overallRate !== undefined ? { overallRate: job.overallRate } : {}),
    timeout: job.timeoutSec ?? 10,
    headers: job.headers,
    requests: [
      {
        method: 'POST',
        path: url.pathname + url.search,
        setupRequest: (req) => {
          req.body = bodyFor(variants, next);
          const own = job.requests[next % job.requests.length].headers;
          if (own !== undefined) req.headers = { ...job.headers, ...own };
          next += 1;
          return req;
        },
        onResponse: (status, body) => {
          if (!counting) return;
          if (status < 200 || status >= 300) counts.non2xx += 1;
          else if (body.includes('"result"') && !body.includes('"isError":true')) counts.ok += 1;
          else {
            counts.bad += 1;
            badSample ??= body.slice(0, 400);
          }
        },
      },
    ],
  });
  if (job.warmupSec > 0) await autocannon(options(job.warmupSec));
  counting = true;
  process.stdout.write('PHASE measure\n');
  const instance = autocannon(options(job.durationSec));
  instance.on('response', (_client, status, _bytes, responseTime) => {
    if (status >= 200 && status < 300) samples.push(responseTime);
  });
  const result = await instance;
  counting = false;
  const seconds = result.duration > 0 ? result.duration : job.durationSec;
  return {
    connections: job.connections,
    durationSec: seconds,
    requests: counts.ok + counts.bad + counts.non2xx,
    ok: counts.ok,
    rps: counts.ok / seconds,
    latency: summarize(samples),
    errors: { bad: counts.bad, non2xx: counts.non2xx, socket: result.errors, timeouts: result.timeouts },
    ...(badSample !== undefined ? { badSample } : {}),
  };
}

async function runSequential() {
  const variants = tails(job.requests);
  const agent = keepAliveAgent(1);
  const classes = {};
  const samples = [];
  let n = 1;
  let errorSample;
  const once = async (record) => {
    const id = n;
    const body = bodyFor(variants, n);
    n += 1;
    let cls;
    let ms;
    try {
      const headers = { ...job.headers, ...job.requests[id % job.requests.length].headers };
      const answer = await request(job.url, { headers, body, agent, timeoutMs: job.timeoutMs ?? 30_000 });
      ms = answer.ms;
      cls = classify(answer, id);
      if (cls !== 'ok') errorSample ??= answer.text.slice(0, 400);
    } catch (err) {
      cls = 'socket';
      errorSample ??= String(err);
    }
    if (!record) return;
    classes[cls] = (classes[cls] ?? 0) + 1;
    if (cls === 'ok') samples.push(ms);
  };
  const warmupUntil = performance.now() + (job.warmupSec ?? 0) * 1000;
  for (let i = 0; i < (job.warmup ?? 0) || performance.now() < warmupUntil; i += 1) await once(false);
  process.stdout.write('PHASE measure\n');
  const started = performance.now();
  const until = started + (job.durationSec ?? 0) * 1000;
  for (let i = 0; i < (job.iterations ?? 0) || performance.now() < until; i += 1) await once(true);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const ok = classes.ok ?? 0;
  const total = Object.values(classes).reduce((a, b) => a + b, 0);
  return {
    connections: 1,
    durationSec: seconds,
    requests: total,
    ok,
    rps: ok / seconds,
    latency: summarize(samples),
    errors: Object.fromEntries(Object.entries(classes).filter(([k]) => k !== 'ok')),
    ...(errorSample !== undefined ? { errorSample } : {}),
  };
}

async function runBurst() {
  const variants = tails(job.requests);
  // `connections` (default: one per request) caps the sockets: S8 sends 1,000 starts over 32.
  const agent = keepAliveAgent(job.connections ?? job.count);
  process.stdout.write('PHASE measure\n');
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: job.count }, async (_, i) => {
      const id = i + 1;
      try {
        const answer = await request(job.url, {
          headers: job.headers,
          body: bodyFor(variants, id),
          agent,
          timeoutMs: job.timeoutMs ?? 300_000,
        });
        const cls = classify(answer, id);
        const sc = responseTo(answer, id)?.result?.structuredContent ?? {};
        return {
          cls,
          ms: answer.ms,
          doneAt: performance.now() - started,
          dagRunId: sc.dagRunId,
          completed: sc.completed,
          statusLabel: sc.statusLabel,
          text: cls === 'ok' ? undefined : answer.text.slice(0, 300),
        };
      } catch (err) {
        return {
          cls: 'socket',
          ms: performance.now() - started,
          doneAt: performance.now() - started,
          text: String(err),
        };
      }
    }),
  );
  agent.destroy();
  const classes = {};
  for (const a of answers) classes[a.cls] = (classes[a.cls] ?? 0) + 1;
  return {
    count: job.count,
    answeredMs: Math.max(...answers.map((a) => a.doneAt)),
    latency: summarize(answers.filter((a) => a.cls === 'ok').map((a) => a.ms)),
    classes,
    runs: answers.map((a) => ({
      dagRunId: a.dagRunId,
      completed: a.completed,
      statusLabel: a.statusLabel,
      cls: a.cls,
    })),
    errorSample: answers.find((a) => a.cls !== 'ok')?.text,
  };
}

/** VmRSS of `pid` in MB, or null when unreadable. */
function rssMb(pid) {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
}

/** Runs `fn` over `items` with at most `limit` at a time. */
async function pool(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i], i);
    }),
  );
  return out;
}

async function runSse() {
  const agent = keepAliveAgent(16);
  const memory = { beforeMb: rssMb(job.gatewayPid) };
  const sessionsStarted = performance.now();
  const sessions = await pool(Array.from({ length: job.streams }), 16, async () => {
    try {
      return await openSession(job.url, { token: job.token, agent });
    } catch (err) {
      return { error: String(err) };
    }
  });
  const sessionErrors = sessions.filter((s) => s.error !== undefined);
  memory.afterSessionsMb = rssMb(job.gatewayPid);
  const sessionsSec = (performance.now() - sessionsStarted) / 1000;
  // One connection per stream: these are long-lived GETs, never pooled.
  const streams = [];
  const openStarted = performance.now();
  await pool(sessions, 64, async (session) => {
    if (session.error !== undefined) return;
    const stream = {
      status: 0,
      opened: undefined,
      keepAlives: [],
      events: 0,
      bytes: 0,
      closedEarly: false,
      error: undefined,
    };
    streams.push(stream);
    await new Promise((resolve) => {
      // A server that never sends the headers must not hang the bench.
      const giveUp = setTimeout(() => {
        stream.error ??= 'no response headers within 15 s';
        resolve();
      }, 15_000);
      const done = () => {
        clearTimeout(giveUp);
        resolve();
      };
      const req = http.request(job.url, {
        method: 'GET',
        headers: { ...mcpHeaders({ token: job.token, ...session }), accept: 'text/event-stream' },
        agent: false,
      });
      stream.req = req;
      req.on('response', (res) => {
        stream.status = res.statusCode ?? 0;
        stream.opened = performance.now();
        stream.contentType = String(res.headers['content-type'] ?? '');
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk) => {
          stream.bytes += chunk.length;
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (block.startsWith(':')) stream.keepAlives.push(performance.now());
            else stream.events += 1;
          }
        });
        res.on('end', () => {
          if (!stream.stopping) stream.closedEarly = true;
        });
        res.on('error', () => undefined);
        if (stream.status !== 200) res.resume();
        done();
      });
      req.on('error', (err) => {
        stream.error ??= String(err);
        done();
      });
      req.end();
    });
  });
  const openSec = (performance.now() - openStarted) / 1000;
  memory.afterOpenMb = rssMb(job.gatewayPid);
  process.stdout.write('PHASE measure\n');
  const holdStarted = performance.now();
  let peak = memory.afterOpenMb ?? 0;
  while (performance.now() - holdStarted < job.holdSec * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    peak = Math.max(peak, rssMb(job.gatewayPid) ?? 0);
  }
  const holdEnd = performance.now();
  memory.endOfHoldMb = rssMb(job.gatewayPid);
  memory.peakMb = peak;
  // Keep-alive timing: the gaps between comments while held (from the first
  // comment on), and the time since the last one at the end of the hold.
  const gaps = [];
  let late = 0;
  const limit = job.keepAliveMs * (1 + (job.toleranceRatio ?? 0.2));
  for (const s of streams) {
    if (s.status !== 200) continue;
    const times = s.keepAlives.filter((t) => t >= s.opened);
    let streamLate = false;
    for (let i = 1; i < times.length; i += 1) {
      gaps.push(times[i] - times[i - 1]);
      if (times[i] - times[i - 1] > limit) streamLate = true;
    }
    const last = times.length > 0 ? times[times.length - 1] : s.opened;
    if (holdEnd - last > limit) streamLate = true;
    if (streamLate) late += 1;
  }
  for (const s of streams) {
    s.stopping = true;
    s.req?.destroy();
  }
  await pool(
    sessions.filter((s) => s.error === undefined),
    16,
    (s) => closeSession(job.url, s, { token: job.token, agent }),
  );
  agent.destroy();
  const statusCounts = {};
  for (const s of streams) {
    const key = s.error !== undefined ? 'socket' : String(s.status);
    statusCounts[key] = (statusCounts[key] ?? 0) + 1;
  }
  const openOk = streams.filter((s) => s.status === 200 && s.contentType.includes('text/event-stream'));
  return {
    requested: job.streams,
    sessionsOpened: sessions.length - sessionErrors.length,
    sessionErrors: sessionErrors.length,
    sessionErrorSample: sessionErrors[0]?.error,
    sessionsSec,
    streamsOpen: openOk.length,
    openSec,
    statusCounts,
    closedEarly: openOk.filter((s) => s.closedEarly).length,
    holdSec: (holdEnd - holdStarted) / 1000,
    keepAliveMs: job.keepAliveMs,
    keepAlivesReceived: openOk.reduce((a, s) => a + s.keepAlives.length, 0),
    streamsWithoutKeepAlive: openOk.filter((s) => s.keepAlives.length === 0).length,
    streamsLate: late,
    gapMs: summarize(gaps),
    memory,
  };
}

const kinds = { autocannon: runAutocannon, sequential: runSequential, burst: runBurst, sse: runSse };
kinds[job.kind]().then(
  (result) => {
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (err) => {
    process.stdout.write(`RESULT ${JSON.stringify({ fatal: String(err?.stack ?? err) })}\n`);
    process.exit(1);
  },
);
