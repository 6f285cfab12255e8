/**
 * Benchmark (issue 26 "Tests"): the console's run page of a 200-step run loads in under a
 * second on this machine. Not a test (CONTRIBUTING "Tests": speed is shown by benchmarks):
 *
 *   bash scripts/build.sh && node bench/console-run-page.mjs [--rounds 5]
 *   WEB_DIST_DIR=/tmp/old-dist node bench/console-run-page.mjs   # another build of the console
 *
 * Starts the built stack (bench/lib/stack.mjs), applies a 200-step DAG (a binary tree of
 * dependencies, so the graph has width and depth), runs it to the end, signs in through the
 * sign-in page in Debian's chromium, then opens the run page `rounds` times in a fresh tab and
 * measures from navigation start:
 * - `pageReadyMs`: until the page is ready (docs/decisions.md "Run page: ready"): the run's
 *   status, all 200 step rows, all 200 timeline bars and the selected step's log are shown;
 * - `graphMs`: until the graph's 200 nodes are drawn too (its layout runs in a Web Worker);
 * - `readyInPageMs`: the page's own clock when it was first ready (from its navigation start,
 *   checked every frame), without this script's round trips to the browser.
 * Prints the figures as JSON, with the load average at the start and the end.
 */
import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { ADMIN, rest, startStack } from './lib/stack.mjs';

const STEPS = 200;
const roundsAt = process.argv.indexOf('--rounds');
const rounds = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 5;

function bigDag() {
  const lines = ['type: graph', 'max_active_steps: 8', 'steps:'];
  for (let i = 0; i < STEPS; i++) {
    lines.push(`  - name: step-${i}`, `    command: echo step ${i}`);
    if (i > 0) lines.push(`    depends: [step-${Math.floor((i - 1) / 2)}]`);
  }
  return `${lines.join('\n')}\n`;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const stack = await startStack({
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  // Another build of the console (a before/after comparison): WEB_DIST_DIR=/path/to/dist.
  extraEnv: process.env.WEB_DIST_DIR !== undefined ? { WEB_DIST_DIR: process.env.WEB_DIST_DIR } : {},
});
let browser;
try {
  const token = (await rest(stack, '/auth/login', { method: 'POST', body: ADMIN })).body.token;
  const put = await rest(stack, '/dags/bench-200', { method: 'PUT', token, body: { spec: bigDag() } });
  if (put.status !== 201) throw new Error(`PUT failed: ${put.status} ${JSON.stringify(put.body)}`);
  const started = await rest(stack, '/dags/bench-200/start', { method: 'POST', token, body: {} });
  const id = started.body.dagRunId;
  const until = Date.now() + 600_000;
  let run;
  do {
    await sleep(1000);
    run = (await rest(stack, `/dag-runs/bench-200/${id}`, { token })).body;
  } while ([0, 1, 5].includes(run.status) && Date.now() < until);
  const runSeconds = (new Date(run.finishedAt).getTime() - new Date(run.startedAt).getTime()) / 1000;

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const signin = await context.newPage();
  await signin.goto(`${stack.baseUrl}/signin?next=/dags`);
  await signin.getByLabel(/user ?name/i).fill(ADMIN.username);
  await signin.getByLabel(/password/i).fill(ADMIN.password);
  await signin.getByRole('button', { name: /sign in/i }).click();
  await signin.waitForURL((url) => url.pathname === '/dags');
  await signin.close();

  const url = `${stack.baseUrl}/runs/bench-200/${id}`;
  const timings = [];
  const loadBefore = loadavg().map((l) => Number(l.toFixed(2)));
  for (let i = 0; i < rounds + 1; i++) {
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(url);
    // Each condition also notes the page's own time (ms since its navigation started) when it
    // first held, checked every frame: the figure without this harness's round trips.
    await page.waitForFunction(
      (n) => {
        const ready =
          document.querySelector('.run-head .badge') !== null &&
          document.querySelectorAll('table.steps tbody tr').length === n &&
          document.querySelectorAll('.timeline .bar').length === n &&
          (document.querySelector('pre.log')?.textContent ?? '') !== '';
        if (ready) window.__readyAt ??= performance.now();
        return ready;
      },
      STEPS,
      { timeout: 30_000, polling: 'raf' },
    );
    const ms = Date.now() - t0;
    await page.waitForFunction(
      (n) => {
        const drawn = document.querySelectorAll('svg.graph .node').length === n;
        if (drawn) window.__graphAt ??= performance.now();
        return drawn;
      },
      STEPS,
      { timeout: 30_000, polling: 'raf' },
    );
    const graphMs = Date.now() - t0;
    const inPage = await page.evaluate(() => ({
      readyInPageMs: Math.round(window.__readyAt),
      graphInPageMs: Math.round(window.__graphAt),
    }));
    const nav = await page.evaluate(() => {
      const entry = performance.getEntriesByType('navigation')[0];
      const marks = Object.fromEntries(
        performance.getEntriesByType('mark').map((m) => [m.name.replace('dagu:', ''), Math.round(m.startTime)]),
      );
      // Where the time goes: each API read's start and end (ms since navigation start).
      const reads = performance
        .getEntriesByType('resource')
        .filter((r) => r.name.includes('/api/') && !r.name.includes('/events'))
        .map(
          (r) =>
            `${new URL(r.name).pathname.replace(/^.*\/api\/v1/, '')} ${Math.round(r.startTime)}-${Math.round(r.responseEnd)}`,
        );
      return {
        domContentLoadedMs: Math.round(entry.domContentLoadedEventEnd),
        loadMs: Math.round(entry.loadEventEnd),
        marks,
        reads,
      };
    });
    await page.close();
    if (i > 0) timings.push({ ms, graphMs, ...inPage, ...nav }); // round 0 warms the gateway's caches and the browser's
  }
  const sorted = timings.map((t) => t.ms).sort((a, b) => a - b);
  const graphSorted = timings.map((t) => t.graphMs).sort((a, b) => a - b);
  const inPageSorted = timings.map((t) => t.readyInPageMs).sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        steps: STEPS,
        runStatus: run.statusLabel,
        runSeconds,
        rounds,
        pageReadyMs: { median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1], all: sorted },
        readyInPageMs: {
          median: inPageSorted[Math.floor(inPageSorted.length / 2)],
          max: inPageSorted[inPageSorted.length - 1],
          all: inPageSorted,
        },
        graphMs: {
          median: graphSorted[Math.floor(graphSorted.length / 2)],
          max: graphSorted[graphSorted.length - 1],
          all: graphSorted,
        },
        loadAverage: { before: loadBefore, after: loadavg().map((l) => Number(l.toFixed(2))) },
        navigation: timings,
        target: 'ready under 1000 ms',
      },
      null,
      2,
    ),
  );
} finally {
  await browser?.close();
  await stack.stop();
}
