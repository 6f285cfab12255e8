/**
 * Keeps the benchmark harness working (the benchmarks issue: "a short smoke
 * mode runs in CI"): runs `node bench/run.mjs --smoke` against the built
 * stack and asserts that every scenario produced a result record and that
 * none of them errored (a scenario that throws, or whose load never got an
 * answer, fails this test; see bench-smoke-result.ts). It asserts that the
 * harness and the stack work, never a speed: missed targets are records too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { smokeProblems, type SmokeResults } from './bench-smoke-result';

const ROOT = join(__dirname, '..');

test('bench smoke: every scenario runs and leaves a record', async () => {
  const out = mkdtempSync(join(tmpdir(), 'dagu-bench-smoke-'));
  try {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, 'bench', 'run.mjs'), '--smoke', '--out', out], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (c) => resolve({ code: c, output: text }));
    });
    if (code !== 0) throw new Error(`bench/run.mjs --smoke exited ${String(code)}:\n${output.slice(-6000)}`);
    const results = JSON.parse(readFileSync(join(out, 'smoke.json'), 'utf8')) as SmokeResults;
    // Every scenario recorded, none errored (bench-smoke-result.ts; its own test proves a failed scenario fails this).
    expect(smokeProblems(results)).toEqual([]);
    expect(readFileSync(join(out, 'smoke.md'), 'utf8')).toContain('| S1 |');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 300_000);
