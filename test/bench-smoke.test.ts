/**
 * Keeps the benchmark harness working (the benchmarks issue: "a short smoke
 * mode runs in CI"): runs `node bench/run.mjs --smoke` against the built
 * stack and asserts that every scenario produced a result record and that
 * the side-by-side core ran (the baseline and scenario 1 answered). It
 * asserts that the harness ran, never a speed: missed targets and failures of
 * parts still being built are records too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

interface ScenarioRecord {
  id: string;
  status: 'ok' | 'error';
  error?: string;
  checks: Array<{ label: string; value: string; met: boolean | null }>;
  figures: Record<string, unknown>;
}

test('bench smoke: every scenario leaves a record', async () => {
  const out = mkdtempSync(join(tmpdir(), 'dagu-bench-smoke-'));
  try {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, 'bench', 'run.mjs'), '--smoke', '--out', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (c) => resolve({ code: c, output: text }));
    });
    if (code !== 0) throw new Error(`bench/run.mjs --smoke exited ${String(code)}:\n${output.slice(-6000)}`);
    const results = JSON.parse(readFileSync(join(out, 'smoke.json'), 'utf8')) as { mode: string; scenarios: ScenarioRecord[]; machine: { cores: number } };
    expect(results.mode).toBe('smoke');
    expect(results.machine.cores).toBeGreaterThan(0);
    const ids = results.scenarios.map((s) => s.id);
    expect(ids).toEqual(['B', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7']);
    for (const s of results.scenarios) {
      // A record holds figures (checks with values) or says why it has none.
      if (s.status === 'ok') expect(s.checks.length).toBeGreaterThan(0);
      else expect(typeof s.error).toBe('string');
    }
    const byId = new Map(results.scenarios.map((s) => [s.id, s]));
    expect(byId.get('B')?.status).toBe('ok');
    expect(byId.get('S1')?.status).toBe('ok');
    expect(readFileSync(join(out, 'smoke.md'), 'utf8')).toContain('| S1 |');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 300_000);
