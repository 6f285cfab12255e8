/**
 * Bounded output and disk (issue 43; docs/reliability.md "Bounded output",
 * "Bounded disk"), through the built stack as root with a uid range: a step
 * that prints 80 MB stores at most `RUN_STEP_LOG_MAX_BYTES` (head, a marker
 * of what was dropped, tail) while run-service's memory stays flat; a step
 * that fills its run directory past `RUN_DIR_MAX_BYTES` fails alone, with the
 * reason, and the next run succeeds; a run started while the disk is nearly
 * full waits, saying why, and runs once there is room. The run directories
 * are on a 128 MiB tmpfs of this test's own, so free space is this test's to
 * set.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';

const LOG_MAX = 4 * 1024 * 1024;
const DIR_MAX = 20 * 1024 * 1024;
const MIN_FREE = 48 * 1024 * 1024;

interface Run {
  dagRunId: string;
  status: number;
  error?: string;
  steps: Array<{ name: string; status: number; error?: string; outputs?: Record<string, string> }>;
}

let stack: Stack;
let client: Client;
let pool: Pool;
let workDir: string;

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('this test switches uids: run it as root');
  workDir = mkdtempSync(join(tmpdir(), 'e2e-run-bounds-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128m,mode=0711', 'tmpfs', workDir]);
  stack = await startStack({
    RUN_STEP_UID_RANGE: '201000-201999',
    RUN_WORK_DIR: workDir,
    RUN_STEP_LOG_MAX_BYTES: String(LOG_MAX),
    RUN_DIR_MAX_BYTES: String(DIR_MAX),
    RUN_DIR_CHECK_MS: '200',
    RUN_MIN_FREE_BYTES: String(MIN_FREE),
  });
  client = await connectClient(stack.mcpUrl);
  pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
}, 60_000);

afterAll(async () => {
  await client.close();
  await stack.stop();
  await pool.end();
  execFileSync('umount', [workDir]);
  rmSync(workDir, { recursive: true, force: true });
});

async function apply(name: string, spec: string): Promise<void> {
  const applied = await client.callTool({ name: 'dagu_change', arguments: { name, spec, mode: 'apply' } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
}

/** Starts DAG `name`; with `wait`, returns the finished run, else the run id alone. */
async function start(name: string, wait: boolean): Promise<Run> {
  const started = await client.callTool(
    {
      name: 'dagu_execute',
      arguments: { action: 'start', name, ...(wait ? { wait, waitTimeoutSeconds: 110 } : {}) },
    },
    undefined,
    { timeout: 120_000 },
  );
  const sc = started.structuredContent as { run?: Run; dagRunId: string };
  return sc.run ?? { dagRunId: sc.dagRunId, status: 1, steps: [] };
}

async function runToEnd(name: string, spec: string): Promise<Run> {
  await apply(name, spec);
  return start(name, true);
}

async function readRun(name: string, dagRunId: string): Promise<Run> {
  const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'run', name, dagRunId } });
  return (read.structuredContent as { data: Run }).data;
}

/** Reads run `dagRunId` until it is no longer queued or running (status 1 or 5). */
async function untilEnded(name: string, dagRunId: string): Promise<Run> {
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    const run = await readRun(name, dagRunId);
    if (run.status !== 1 && run.status !== 5) return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${dagRunId} did not end`);
}

const NEIGHBOUR = `steps:
  - name: work
    run: |
      sleep 1
      echo neighbour > result.txt
      echo "OK=$(cat result.txt)" >> "$DAGU_OUTPUT_FILE"
    outputs: [OK]
`;

/** Resident memory of a process, bytes (`VmRSS` of /proc). */
function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

test('an 80 MB flood stores at most RUN_STEP_LOG_MAX_BYTES, head and tail, while memory stays flat', async () => {
  const pid = stack.processesOf('run-service')[0]?.pid ?? 0;
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 100);
  let run: Run;
  try {
    run = await runToEnd(
      'flood',
      `steps:
  - name: flood
    run: |
      echo FIRST-LINE
      head -c 60000000 /dev/urandom | base64 -w 100
      echo LAST-LINE
`,
    );
  } finally {
    clearInterval(sampler);
  }
  expect(run.status).toBe(4);
  const schema = stack.schemaOf('run-service');
  const { rows } = await pool.query<{ bytes: string; lines: number }>(
    `SELECT total_bytes::text AS bytes, total_lines AS lines FROM "${schema}".log_streams ORDER BY total_bytes DESC LIMIT 1`,
  );
  const stored = Number(rows[0]?.bytes);
  // 80 MB printed; the bound plus one marker line stored.
  expect(stored).toBeLessThanOrEqual(LOG_MAX + 200);
  expect(stored).toBeGreaterThan(LOG_MAX / 2);
  const text = await pool.query<{ text: string }>(
    `SELECT c.text FROM "${schema}".log_chunks c WHERE c.text LIKE '%FIRST-LINE%' OR c.text LIKE '%bytes of output dropped%' OR c.text LIKE '%LAST-LINE%' ORDER BY c.first_line`,
  );
  const joined = text.rows.map((r) => r.text).join('\n');
  expect(joined).toContain('FIRST-LINE');
  expect(joined).toMatch(
    /\[dagu: \d{8} bytes of output dropped here \(RUN_STEP_LOG_MAX_BYTES\); the last \d+ bytes follow\]/,
  );
  expect(joined).toContain('LAST-LINE');
  // Was 97 → 486 MB before the bound (issue 43); now what the engine holds for the step is half the bound.
  expect(peak - before).toBeLessThan(100 * 1024 * 1024);
}, 150_000);

test('a step filling its run directory past RUN_DIR_MAX_BYTES fails alone, with the reason; the next run succeeds', async () => {
  await apply(
    'filler',
    `steps:
  - name: fill
    run: |
      for i in 1 2 3; do head -c 10000000 /dev/zero > f$i; done
      sleep 30
`,
  );
  await apply('neighbour', NEIGHBOUR);
  const filler = await start('filler', false);
  const neighbour = await start('neighbour', true);
  expect({ status: neighbour.status, step: neighbour.steps[0]?.outputs }).toEqual({
    status: 4,
    step: { OK: 'neighbour' },
  });
  const failed = await untilEnded('filler', filler.dagRunId);
  expect(failed.status).toBe(2);
  expect(failed.steps[0]?.error).toMatch(/^the run directory holds \d+ bytes, over RUN_DIR_MAX_BYTES \(20971520\)$/);
  // Its disk is back at once, not at retention.
  expect(existsSync(join(workDir, 'filler', filler.dagRunId))).toBe(false);
  expect((await start('neighbour', true)).status).toBe(4);
}, 90_000);

test('one file past RUN_DIR_MAX_BYTES fails its write (RLIMIT_FSIZE) before any measure', async () => {
  const run = await runToEnd(
    'one-big-file',
    `steps:
  - name: big
    run: head -c 30000000 /dev/zero > big
`,
  );
  expect(run.status).toBe(2);
  // The kernel stopped the write at once (SIGXFSZ); the directory watch had nothing to measure yet.
  expect(run.steps[0]?.error ?? '').not.toMatch(/RUN_DIR_MAX_BYTES/);
  expect((await start('neighbour', true)).status).toBe(4);
}, 60_000);

test('while free space is below RUN_MIN_FREE_BYTES a started run waits queued with the reason, an enqueued one stays queued; then both run', async () => {
  await apply('neighbour', NEIGHBOUR);
  const filler = join(workDir, 'root-filler');
  // 128 MiB tmpfs: 100 MiB taken leaves less than the 48 MiB a run needs.
  execFileSync('fallocate', ['-l', String(100 * 1024 * 1024), filler]);
  let run: Run;
  let queued: string;
  try {
    run = await start('neighbour', false);
    // Recorded queued (5), not running: no step may start on a nearly full disk.
    expect((await readRun('neighbour', run.dagRunId)).status).toBe(5);
    const enqueued = await client.callTool({
      name: 'dagu_execute',
      arguments: { action: 'enqueue', name: 'neighbour' },
    });
    queued = (enqueued.structuredContent as { dagRunId: string }).dagRunId;
    const schema = stack.schemaOf('run-service');
    const { rows } = await pool.query<{ details: { queuedBecause?: string } }>(
      `SELECT details FROM "${schema}".mutation_log WHERE target LIKE $1`,
      [`%/${run.dagRunId}`],
    );
    expect(rows[0]?.details.queuedBecause ?? '').toMatch(
      /^waiting for disk space: \d+ bytes free where runs work, below RUN_MIN_FREE_BYTES \(50331648\)$/,
    );
    // Neither is claimed while the disk stays full: both stay queued (5) for a replica with room.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const held = await readRun('neighbour', run.dagRunId);
    expect({ status: held.status, step: held.steps[0]?.status }).toEqual({ status: 5, step: 0 });
    expect((await readRun('neighbour', queued)).status).toBe(5);
  } finally {
    rmSync(filler, { force: true });
  }
  const ended = await untilEnded('neighbour', run.dagRunId);
  expect({ status: ended.status, step: ended.steps[0]?.outputs }).toEqual({ status: 4, step: { OK: 'neighbour' } });
  expect((await untilEnded('neighbour', queued)).status).toBe(4);
}, 90_000);
