import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { killLeftoverStepGroups, processStartTime, StepGroupRegistry } from './step-group-registry';

/** Real process groups: what a restart kills, and what it must leave alone. */
let dir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'step-groups-'));
});
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A detached `sleep` (a group of its own, like a step); resolves with its pid. */
function sleeper(): { pid: number; exited: Promise<NodeJS.Signals | null> } {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  children.push(child);
  if (child.pid === undefined) throw new Error('sleep did not start');
  return { pid: child.pid, exited: new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal))) };
}

it('kills the live groups a dead run-service of this host recorded, and deletes its file', async () => {
  const ended = sleeper();
  const live = sleeper();
  const reused = sleeper();
  // A dead owner (pid 2^22 + 1 never exists) that recorded three groups: one ended, one live, one whose id is reused.
  writeFileSync(
    join(dir, `${hostname()}-4194305-42`),
    `+${ended.pid} ${processStartTime(ended.pid) ?? ''}\n+${live.pid} ${processStartTime(live.pid) ?? ''}\n` +
      `-${ended.pid}\n+${reused.pid} 1\n`,
  );
  const report = killLeftoverStepGroups(dir);
  expect(report).toEqual({ files: 1, killed: [live.pid] });
  expect(await live.exited).toBe('SIGKILL');
  expect(readdirSync(dir)).toEqual([]);
  expect(existsSync(`/proc/${ended.pid}`)).toBe(true);
  expect(existsSync(`/proc/${reused.pid}`)).toBe(true);
});

it("leaves a live replica's file alone and records this process's groups as they start and end", () => {
  const registry = new StepGroupRegistry(dir);
  const own = readdirSync(dir);
  expect(own).toEqual([`${hostname()}-${process.pid}-${processStartTime(process.pid) ?? '0'}`]);
  const a = sleeper();
  const b = sleeper();
  registry.started(a.pid);
  registry.started(b.pid);
  registry.ended(a.pid);
  expect(killLeftoverStepGroups(dir)).toEqual({ files: 0, killed: [] }); // our own file: a live owner
  expect(readdirSync(dir)).toEqual(own);
  registry.ended(b.pid);
  registry.close();
  expect(readdirSync(dir)).toEqual([]);
});

it('keeps recording when its directory is deleted under it (a cleanup emptied the work directory)', () => {
  const nested = join(dir, 'state');
  const registry = new StepGroupRegistry(nested);
  rmSync(nested, { recursive: true, force: true });
  expect(() => registry.started(4194305)).not.toThrow();
  expect(readdirSync(nested)).toHaveLength(1);
  rmSync(nested, { recursive: true, force: true });
  expect(() => registry.ended(4194305)).not.toThrow();
  expect(() => new StepGroupRegistry(nested)).not.toThrow();
});
