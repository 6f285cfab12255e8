import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findStepSpawner } from './process-spawner';
import { encodeToSpawner, SpawnerFrameReader, type FromSpawner } from './spawner-protocol';

/**
 * The native step spawner (`native/step-spawner.c`) driven frame by frame
 * (spawner-protocol.ts), for what the process runner cannot show: where a
 * bare name is looked up, a start that runs out of descriptors, and what the
 * end of its stdin kills. Real processes throughout.
 */

const binary = findStepSpawner();
if (binary === undefined)
  throw new Error('build the native step spawner first (apps/run-service/scripts/build-native.sh)');
const PATH = process.env.PATH ?? '/usr/bin:/bin';
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A spawner started through `sh -c` (so a test can lower its limits first), with its frames collected. */
function startSpawner(shellPrefix = ''): { proc: ChildProcessWithoutNullStreams; frames: FromSpawner[] } {
  const proc = spawn('/bin/sh', ['-c', `${shellPrefix} exec "$0"`, binary ?? ''], { stdio: 'pipe' });
  const frames: FromSpawner[] = [];
  const reader = new SpawnerFrameReader((message) =>
    frames.push(message.t === 'out' ? { ...message, data: Buffer.from(message.data) } : message),
  );
  proc.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
  return { proc, frames };
}

async function until<T>(find: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Gone, or a zombie (killed, waiting to be reaped by whoever inherited it). */
function dead(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

const ended = (frames: FromSpawner[], id: number) => () =>
  frames.find((f) => f.id === id && (f.t === 'close' || f.t === 'error'));

test('a bare name is looked up on PATH from the step working directory, relative entries included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spawner-path-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin', 'tool'), '#!/bin/sh\necho "tool in $PWD"\n');
  chmodSync(join(dir, 'bin', 'tool'), 0o755);
  const { proc, frames } = startSpawner();
  proc.stdin.write(
    encodeToSpawner({ t: 'spawn', id: 1, file: 'tool', args: [], cwd: dir, env: { PATH: `bin:${PATH}` } }),
  );
  expect(await until(ended(frames, 1))).toMatchObject({ t: 'close', code: 0 });
  const out = frames.filter((f) => f.t === 'out' && f.id === 1).map((f) => (f.t === 'out' ? f.data.toString() : ''));
  expect(out.join('')).toBe(`tool in ${dir}\n`);
  proc.stdin.end();
});

test('a start that runs out of descriptors fails that step alone; the spawner goes on', async () => {
  // 16 descriptors: a few steps' pipes fill them.
  const { proc, frames } = startSpawner('ulimit -n 16;');
  const sleeps = [1, 2, 3, 4, 5, 6, 7, 8];
  for (const id of sleeps)
    proc.stdin.write(encodeToSpawner({ t: 'spawn', id, file: 'sleep', args: ['30'], cwd: '/', env: { PATH } }));
  const firsts = await until(() => {
    const got = sleeps.map((id) => frames.find((f) => f.id === id && (f.t === 'started' || f.t === 'error')));
    return got.every((f) => f !== undefined) ? got : undefined;
  });
  const errors = firsts.filter((f) => f?.t === 'error');
  expect(errors.length).toBeGreaterThan(0);
  expect(errors.map((f) => (f?.t === 'error' ? f.message : ''))).toContain('spawn sleep EMFILE');
  const started = firsts.flatMap((f) => (f?.t === 'started' ? [f.pid] : []));
  expect(started.length).toBeGreaterThan(0);
  // Still running, and it kills what it started when its stdin ends.
  expect(proc.exitCode).toBeNull();
  proc.stdin.end();
  await until(() => (started.every(dead) ? true : undefined));
});

test('the end of its stdin kills a group whose leader exited while a background process holds its pipes', async () => {
  const { proc, frames } = startSpawner();
  proc.stdin.write(
    encodeToSpawner({
      t: 'spawn',
      id: 1,
      file: '/bin/sh',
      args: ['-c', 'sleep 30 & echo $!; exit 0'],
      cwd: '/',
      env: { PATH },
    }),
  );
  const out = await until(() => frames.find((f) => f.t === 'out' && f.id === 1));
  await until(() => frames.find((f) => f.t === 'exit' && f.id === 1));
  const background = Number(out.t === 'out' ? out.data.toString().trim() : NaN);
  expect(dead(background)).toBe(false);
  proc.stdin.end();
  await until(() => (dead(background) ? true : undefined));
});
