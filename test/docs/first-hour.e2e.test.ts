/**
 * The README's "First hour" runs as written (issue "The first hour", Done means): its shell
 * blocks are joined into one bash script and run against a real stack in `AUTH_MODE=builtin`,
 * with only the address (`http://127.0.0.1:8080` → the stack's) and the admin password
 * (`<password>`) put in. The script must log in, mint a key, write a DAG from a YAML body,
 * start it, and see it finish.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, type Stack } from '../e2e/stack';
import { codeBlocks } from './readme-blocks';

const ADMIN_PASSWORD = 'first-hour-password-123';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: 'admin', ADMIN_PASSWORD });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** Runs `script` in bash; resolves with its exit code and output. */
function bash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test("the README's First hour commands reach a finished run", async () => {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const blocks = codeBlocks(readme).filter((b) => b.section === 'First hour' && b.lang === 'sh');
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  const script = ['set -euo pipefail', ...blocks.map((b) => b.text), 'echo "RUN=$RUN"']
    .join('\n')
    .replaceAll('http://127.0.0.1:8080', stack.baseUrl)
    .replaceAll('<password>', ADMIN_PASSWORD);
  const result = await bash(script);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });

  const lines = result.stdout.split('\n');
  const run = /RUN=(.+)/.exec(result.stdout)?.[1];
  expect(run).toMatch(/\S/);
  // PUT answered with the written DAG; the detail, the step log and the filtered list follow.
  const json = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const [put, detail, log, list] = json;
  expect(put).toMatchObject({ valid: true, applied: true, created: true });
  expect(detail).toMatchObject({ dagRunId: run, statusLabel: 'succeeded' });
  expect(JSON.stringify(log)).toContain('hello');
  expect(list).toMatchObject({ items: [expect.objectContaining({ dagRunId: run, statusLabel: 'succeeded' })] });
}, 60_000);
