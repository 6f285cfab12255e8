import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepLauncher } from '../core/step-launch';
import { runProcess } from './process-runner';
import { createIsolatingLauncher } from './run-isolation';
import { findOnPath } from './step-launcher';
import { ProcessSpawner } from './spawner/process-spawner';

/**
 * A uid per run, with real processes as root: each run's launcher
 * starts its processes — through the native spawner and through setpriv alike
 * — as its own uid, umask 077, with the limits; `release` kills what the uid
 * left running, removes its temp files and closes the run directory.
 */
const PATH = process.env.PATH ?? '/usr/bin:/bin';
const setpriv = findOnPath(PATH, 'setpriv');
const prlimit = findOnPath(PATH, 'prlimit');
let spawner: ProcessSpawner;
let scratch: string;

beforeAll(() => {
  if (process.getuid?.() !== 0 || setpriv === undefined || prlimit === undefined)
    throw new Error('this test needs root and util-linux setpriv and prlimit');
  spawner = new ProcessSpawner({ setpriv });
  scratch = mkdtempSync(join(tmpdir(), 'run-isolation-'));
  // Like /tmp: everyone writes, nobody deletes another's files.
  chmodSync(scratch, 0o1777);
});

afterAll(() => {
  if (spawner?.pid !== undefined) process.kill(spawner.pid, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

function launcherOf(withSpawner: boolean): StepLauncher {
  return createIsolatingLauncher({
    first: 210000,
    last: 210009,
    limits: { maxProcesses: 33, maxCpuSeconds: 50, maxAddressBytes: 2 ** 32 },
    setpriv: setpriv ?? '',
    ...(prlimit !== undefined ? { prlimit } : {}),
    ownUid: 0,
    ownGid: 0,
    sharedTmp: [scratch],
    ...(withSpawner ? { spawner } : {}),
  });
}

async function shell(launcher: StepLauncher, cwd: string, command: string): Promise<string[]> {
  const lines: string[] = [];
  const outcome = await runProcess({
    file: '/bin/sh',
    args: ['-c', command],
    cwd,
    env: { PATH },
    launcher,
    signal: new AbortController().signal,
    killGraceMs: 500,
    onStdout: (line) => lines.push(line),
    onStderr: (line) => lines.push(`err ${line}`),
  });
  expect(outcome).toMatchObject({ exitCode: 0 });
  return lines;
}

const PROBE = `id -u; id -G; umask; grep -E 'Max (processes|cpu time|address space)' /proc/self/limits | tr -s ' '`;

test.each([
  ['the native spawner', true],
  ['setpriv and prlimit', false],
])('through %s, two runs get two uids, umask 077 and the limits', async (_label, withSpawner) => {
  const base = launcherOf(withSpawner);
  const one = base.isolateRun!();
  const two = base.isolateRun!();
  expect(one.uid).not.toBe(two.uid);
  expect(one.exclusive).toBe(true);
  const lines = (await shell(one.launcher, scratch, PROBE)).map((line) => line.trim());
  expect(lines).toEqual([
    String(one.uid),
    String(one.uid),
    '0077',
    'Max cpu time 50 50 seconds',
    'Max processes 33 33 processes',
    'Max address space 4294967296 4294967296 bytes',
  ]);
  await one.release(undefined);
  await two.release(undefined);
});

test("release kills the uid's leftover processes, removes its temp files and closes the run directory", async () => {
  const run = launcherOf(true).isolateRun!();
  // Outside the shared temp directory (whose entries of the uid release removes).
  const runDir = join(mkdtempSync(join(tmpdir(), 'run-isolation-dir-')), 'run');
  mkdirSync(runDir);
  await run.launcher.adopt(runDir);
  // A process that left the step's group (setsid) and a file in the shared temp directory.
  await shell(run.launcher, runDir, `touch ${scratch}/left-behind; setsid sleep 60 > /dev/null 2>&1 < /dev/null &`);
  // Live ones: a killed orphan may stay a zombie until this container's init reaps it.
  const uidProcesses = (): number =>
    Number(execFileSync('sh', ['-c', `ps -o stat= -u ${run.uid} | grep -v '^Z' | wc -l`], { encoding: 'utf8' }).trim());
  expect(uidProcesses()).toBe(1);
  expect(existsSync(join(scratch, 'left-behind'))).toBe(true);
  await run.release(runDir);
  expect(uidProcesses()).toBe(0);
  expect(existsSync(join(scratch, 'left-behind'))).toBe(false);
  const sealed = statSync(runDir);
  expect({ uid: sealed.uid, mode: sealed.mode & 0o777 }).toEqual({ uid: 0, mode: 0o700 });
  rmSync(join(runDir, '..'), { recursive: true, force: true });
});

test('a one-uid range (RUN_STEP_USER) is shared, and a full range refuses a run', () => {
  const shared = createIsolatingLauncher({
    first: 210100,
    last: 210100,
    limits: {},
    setpriv: setpriv ?? '',
    ownUid: 0,
    ownGid: 0,
    sharedTmp: [],
  });
  const a = shared.isolateRun!();
  expect(a.exclusive).toBe(false);
  expect(() => shared.isolateRun!()).toThrow(/no free uid/);
  void a.release(undefined);
});
