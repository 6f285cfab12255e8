import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIRECT_LAUNCHER, type StepLauncher } from '../../core/step-launch';
import { runProcess, type ProcessOutcome } from '../process-runner';
import { findSetpriv, resolveStepIdentity } from '../step-launcher';
import { ProcessSpawner } from './process-spawner';
import { isAlive } from '../../../test-fixtures/process-alive';

/**
 * The native step spawner (docs/decisions.md "Steps start from a small
 * spawner process"): step processes started by `native/step-spawner`
 * (built by the package's build), driven through the same process runner the
 * engine uses. Real processes throughout.
 */

const PATH = process.env.PATH ?? '/usr/bin:/bin';
const spawners: ProcessSpawner[] = [];

function spawnerLauncher(spawner = new ProcessSpawner()): StepLauncher {
  spawners.push(spawner);
  return { ...DIRECT_LAUNCHER, spawner };
}

afterAll(() => {
  for (const spawner of spawners) if (spawner.pid !== undefined) process.kill(spawner.pid, 'SIGKILL');
});

async function run(
  launcher: StepLauncher,
  command: string,
  opts: { signal?: AbortSignal; timeoutMs?: number; lines?: string[]; file?: string } = {},
): Promise<ProcessOutcome> {
  const lines = opts.lines ?? [];
  return runProcess({
    file: opts.file ?? '/bin/sh',
    args: ['-c', command],
    cwd: process.cwd(),
    env: { PATH },
    launcher,
    signal: opts.signal ?? new AbortController().signal,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    killGraceMs: 500,
    onStdout: (line) => lines.push(`out ${line}`),
    onStderr: (line) => lines.push(`err ${line}`),
  });
}

async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

test('relays output in order, the exit code, and a start failure', async () => {
  const launcher = spawnerLauncher();
  const lines: string[] = [];
  const outcome = await run(launcher, 'echo one; echo two >&2; printf "three"; exit 7', { lines });
  expect(outcome).toEqual({ exitCode: 7, signal: null, timedOut: false, aborted: false });
  expect(lines).toEqual(['out one', 'err two', 'out three']);
  const missing = await run(launcher, 'true', { file: '/no/such/shell' });
  expect(missing).toMatchObject({ exitCode: null, spawnError: expect.stringContaining('ENOENT') as string });
});

test('the step gets exactly its environment, default signals, its own group, /dev/null as stdin; PATH finds a bare name', async () => {
  const launcher = spawnerLauncher();
  const lines: string[] = [];
  const outcome = await runProcess({
    file: 'sh',
    args: [
      '-c',
      'env | sort; grep -E "^Sig(Blk|Ign):" /proc/self/status | tr -s "\\t " " "; ps -o pgid= -p $$ | tr -d " "; echo "pid $$"; readlink /proc/self/fd/0',
    ],
    cwd: '/tmp',
    env: { PATH, ONLY: 'this' },
    launcher,
    signal: new AbortController().signal,
    killGraceMs: 500,
    onStdout: (line) => lines.push(line),
    onStderr: (line) => lines.push(`err ${line}`),
  });
  expect(outcome.exitCode).toBe(0);
  const pid = lines.find((line) => line.startsWith('pid '))?.slice(4);
  // sh adds PWD, SHLVL and _ of its own; nothing of the spawner's or this process's environment.
  expect(lines.filter((line) => /^[A-Z_]+=/.test(line) && !/^(PWD|SHLVL|_|OLDPWD)=/.test(line))).toEqual([
    'ONLY=this',
    `PATH=${PATH}`,
  ]);
  expect(lines).toContain('PWD=/tmp');
  expect(lines).toContain('SigBlk: 0000000000000000');
  expect(lines).toContain('SigIgn: 0000000000000000');
  // The step leads its own process group (the runner kills it by group).
  expect(lines).toContain(String(pid));
  expect(lines).toContain('/dev/null');
});

test('a step ended by a signal reports it; a file that cannot run reports why', async () => {
  const launcher = spawnerLauncher();
  expect(await run(launcher, 'kill -TERM $$')).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  const dir = mkdtempSync(join(tmpdir(), 'spawner-'));
  writeFileSync(join(dir, 'plain'), 'echo never\n', { mode: 0o644 });
  expect(await run(launcher, 'true', { file: join(dir, 'plain') })).toMatchObject({
    exitCode: null,
    spawnError: `spawn ${join(dir, 'plain')} EACCES`,
  });
  // As execvp does: an executable without a #! line runs as a /bin/sh script.
  writeFileSync(join(dir, 'script'), 'echo "as sh: $1"\n', { mode: 0o755 });
  const lines: string[] = [];
  expect(await run(launcher, 'arg1', { file: join(dir, 'script'), lines })).toMatchObject({ exitCode: 0 });
  expect(lines).toEqual(['out as sh: -c']);
  rmSync(dir, { recursive: true, force: true });
  expect(await run(launcher, 'true', { file: 'no-such-program-here' })).toMatchObject({
    spawnError: 'spawn no-such-program-here ENOENT',
  });
  const missingDir = await runProcess({
    file: '/bin/sh',
    args: ['-c', 'true'],
    cwd: '/no/such/dir',
    env: { PATH },
    launcher,
    signal: new AbortController().signal,
    killGraceMs: 500,
    onStdout: () => undefined,
    onStderr: () => undefined,
  });
  expect(missingDir).toMatchObject({ exitCode: null, spawnError: 'spawn /bin/sh ENOENT' });
  // A NUL cannot cross exec: refused before the spawner, as Node's spawn refuses it.
  expect(await run(launcher, 'echo a\0b')).toMatchObject({ spawnError: expect.stringContaining('NUL') as string });
});

test('a background process that keeps the pipes open does not hold the step past the drain time', async () => {
  const launcher = spawnerLauncher();
  const lines: string[] = [];
  const started = Date.now();
  const outcome = await run(launcher, 'sleep 30 & echo "bg $!"; exit 3', { lines });
  expect(outcome).toMatchObject({ exitCode: 3 });
  expect(Date.now() - started).toBeLessThan(5000);
  const background = Number(lines[0]?.split(' ')[2]);
  process.kill(background, 'SIGKILL');
});

test('carries large output whole while the runner pauses and resumes it', async () => {
  const spawner = new ProcessSpawner();
  spawners.push(spawner);
  let paused = 0;
  let room: (() => void) | undefined;
  let count = 0;
  let last = '';
  const outcome = await runProcess({
    file: '/bin/sh',
    args: ['-c', 'seq 1 200000'],
    cwd: process.cwd(),
    env: { PATH },
    launcher: { ...DIRECT_LAUNCHER, spawner },
    signal: new AbortController().signal,
    killGraceMs: 500,
    onStdout: (line) => {
      count++;
      last = line;
    },
    onStderr: () => undefined,
    backpressure: {
      // Overloaded every 50,000 lines until the next tick: the runner must pause, then resume.
      get overloaded() {
        return count % 50_000 === 0 && room === undefined;
      },
      waitForRoom: () => {
        paused++;
        return new Promise<void>((resolve) => {
          room = () => {
            room = undefined;
            resolve();
          };
          setTimeout(() => room?.(), 20);
        });
      },
    },
  });
  expect(outcome.exitCode).toBe(0);
  expect(count).toBe(200_000);
  expect(last).toBe('200000');
  expect(paused).toBeGreaterThan(0);
});

test('a stop kills the whole process group, also one asked for before the pid is known', async () => {
  const launcher = spawnerLauncher();
  const controller = new AbortController();
  const lines: string[] = [];
  const running = run(launcher, 'sleep 30 & echo "bg $!"; wait', { signal: controller.signal, lines });
  await waitUntil(() => lines.length > 0, 5000);
  const background = Number(lines[0]?.split(' ')[2]);
  controller.abort();
  const outcome = await running;
  expect(outcome).toMatchObject({ aborted: true, exitCode: null });
  expect(await waitUntil(() => !isAlive(background), 3000)).toBe(true);

  const early = new AbortController();
  early.abort();
  const started = Date.now();
  expect(await run(launcher, 'sleep 30', { signal: early.signal })).toMatchObject({ aborted: true });
  expect(Date.now() - started).toBeLessThan(5000);
});

test('a killed spawner fails its open steps (their groups killed) and the next step gets a new one', async () => {
  const spawner = new ProcessSpawner();
  const launcher = spawnerLauncher(spawner);
  const lines: string[] = [];
  const running = run(launcher, 'echo "pid $$"; sleep 30', { lines });
  await waitUntil(() => lines.length > 0, 5000);
  const stepPid = Number(lines[0]?.split(' ')[1]);
  const first = spawner.pid;
  if (first === undefined) throw new Error('no spawner');
  process.kill(first, 'SIGKILL');
  expect(await running).toMatchObject({ exitCode: null, spawnError: 'the step spawner exited' });
  expect(await waitUntil(() => !isAlive(stepPid), 3000)).toBe(true);
  expect(await run(launcher, 'exit 0')).toMatchObject({ exitCode: 0 });
  expect(spawner.pid).not.toBe(first);
});

test('a step started after the spawner died but before its close was seen runs on the next spawner', async () => {
  const spawner = new ProcessSpawner();
  const launcher = spawnerLauncher(spawner);
  const dying: unknown = Reflect.get(spawner, 'process');
  if (!(dying instanceof ChildProcess)) throw new Error('no spawner process');
  // Node reports the spawner's exit before its close: a step started in between must not be
  // failed with the dead spawner's children (it would run unsupervised).
  const lines: string[] = [];
  const started = new Promise<ProcessOutcome>((resolve) =>
    dying.once('exit', () => resolve(run(launcher, 'echo ok', { lines }))),
  );
  dying.kill('SIGKILL');
  expect(await started).toMatchObject({ exitCode: 0 });
  expect(lines).toEqual(['out ok']);
  expect(spawner.open).toBe(0);
});

test('when run-service dies (kill -9), the spawner kills the steps it started and exits', async () => {
  // A stand-in run-service: a process of its own that starts one long step through a spawner.
  const script = `
    const { ProcessSpawner } = require(${JSON.stringify(join(__dirname, 'process-spawner.ts'))});
    const { runProcess } = require(${JSON.stringify(join(__dirname, '..', 'process-runner.ts'))});
    const { DIRECT_LAUNCHER } = require(${JSON.stringify(join(__dirname, '..', '..', 'core', 'step-launch.ts'))});
    const spawner = new ProcessSpawner();
    void runProcess({ file: '/bin/sh', args: ['-c', 'echo "$$"; sleep 30'], cwd: '/', env: { PATH: process.env.PATH },
      launcher: { ...DIRECT_LAUNCHER, spawner }, signal: new AbortController().signal, killGraceMs: 500,
      onStdout: (line) => console.log(JSON.stringify({ step: Number(line), spawner: spawner.pid })), onStderr: () => {} });
  `;
  const register = join(__dirname, '..', '..', '..', '..', '..', 'packages', 'bus', 'test-fixtures', 'ts-register.js');
  const parent = spawn(process.execPath, ['-r', register, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pids = await new Promise<{ step: number; spawner: number }>((resolve, reject) => {
    parent.stdout.on('data', (chunk: Buffer) =>
      resolve(JSON.parse(chunk.toString()) as { step: number; spawner: number }),
    );
    parent.on('exit', () => reject(new Error('the stand-in run-service exited early')));
  });
  expect(isAlive(pids.step)).toBe(true);
  parent.kill('SIGKILL');
  expect(await waitUntil(() => !isAlive(pids.step), 5000)).toBe(true);
  expect(await waitUntil(() => !isAlive(pids.spawner), 5000)).toBe(true);
});

// Needs root (as CI and the images run run-service) to switch users: fails, never skips, without it.
test('with a step user: the step runs as that user, without groups, with no new privileges', async () => {
  try {
    execFileSync('id', ['-u', 'dagu-step'], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', 'dagu-step'], { stdio: 'ignore' });
  }
  const setpriv = findSetpriv(PATH);
  const launcher = spawnerLauncher(
    new ProcessSpawner({ identity: resolveStepIdentity('dagu-step'), ...(setpriv !== undefined ? { setpriv } : {}) }),
  );
  const lines: string[] = [];
  const outcome = await run(
    launcher,
    'id -un; grep -E "^(Groups|NoNewPrivs):" /proc/self/status | tr -s "\\t " " "; ' +
      'cat /proc/$PPID/environ > /dev/null 2>&1 && echo parent-readable || echo parent-denied',
    { lines },
  );
  expect(outcome.exitCode).toBe(0);
  expect(lines).toEqual(['out dagu-step', 'out Groups: ', 'out NoNewPrivs: 1', 'out parent-denied']);

  // The working directory is entered before the user switch (as Node's spawn does): a run
  // directory of the step user's inside a base closed to it.
  const base = mkdtempSync(join(tmpdir(), 'spawner-base-'));
  const runDir = join(base, 'run');
  mkdirSync(runDir);
  const { uid, gid } = resolveStepIdentity('dagu-step');
  chownSync(runDir, uid, gid);
  const inRunDir: string[] = [];
  const wrote = await runProcess({
    file: '/bin/sh',
    args: ['-c', 'echo written > here.txt && cat here.txt && pwd'],
    cwd: runDir,
    env: { PATH },
    launcher,
    signal: new AbortController().signal,
    killGraceMs: 500,
    onStdout: (line) => inRunDir.push(line),
    onStderr: (line) => inRunDir.push(`err ${line}`),
  });
  rmSync(base, { recursive: true, force: true });
  expect(wrote.exitCode).toBe(0);
  expect(inRunDir).toEqual(['written', runDir]);
});
