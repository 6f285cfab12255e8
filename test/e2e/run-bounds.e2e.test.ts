/**
 * Bounded output and disk (issue 43; docs/reliability.md "Bounded output",
 * "Bounded disk"), through the built stack as root with a uid range: a step
 * that prints 80 MB stores at most `RUN_STEP_LOG_MAX_BYTES` (head, a marker
 * of what was dropped, tail) while run-service's memory stays flat; a step
 * that fills its run directory past `RUN_DIR_MAX_BYTES` fails alone, with the
 * reason, and the next run succeeds.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';

const LOG_MAX = 4 * 1024 * 1024;

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
  stack = await startStack({
    RUN_STEP_UID_RANGE: '201000-201999',
    RUN_WORK_DIR: workDir,
    RUN_STEP_LOG_MAX_BYTES: String(LOG_MAX),
  });
  client = await connectClient(stack.mcpUrl);
  pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
}, 60_000);

afterAll(async () => {
  await client.close();
  await stack.stop();
  await pool.end();
  rmSync(workDir, { recursive: true, force: true });
});

async function runToEnd(name: string, spec: string): Promise<Run> {
  const applied = await client.callTool({ name: 'dagu_change', arguments: { name, spec, mode: 'apply' } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
  const started = await client.callTool(
    { name: 'dagu_execute', arguments: { action: 'start', name, wait: true, waitTimeoutSeconds: 110 } },
    undefined,
    { timeout: 120_000 },
  );
  return (started.structuredContent as { run: Run }).run;
}

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
