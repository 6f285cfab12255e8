import { readFileSync } from 'node:fs';
import { DIRECT_LAUNCHER } from '../../core/step-launch';
import { runProcess } from '../process-runner';
import { ProcessSpawner } from './process-spawner';
import { SpawnerPool } from './spawner-pool';

/**
 * `RUN_STEP_SPAWNERS`: steps go to the spawner with the fewest open
 * steps. Real spawner processes; a step reports its parent, the spawner that
 * started it.
 */
const PATH = process.env.PATH ?? '/usr/bin:/bin';
const members = [new ProcessSpawner(), new ProcessSpawner()];
const launcher = { ...DIRECT_LAUNCHER, spawner: new SpawnerPool(members) };

afterAll(() => {
  for (const spawner of members) if (spawner.pid !== undefined) process.kill(spawner.pid, 'SIGKILL');
});

/** Runs `command` through the pool and resolves with the pid of the spawner that started it. */
async function parentOf(command: string): Promise<number> {
  const lines: string[] = [];
  await runProcess({
    file: '/bin/sh',
    args: ['-c', `${command}; echo $PPID`],
    cwd: process.cwd(),
    env: { PATH },
    launcher,
    signal: new AbortController().signal,
    killGraceMs: 500,
    onStdout: (line) => lines.push(line),
    onStderr: () => undefined,
  });
  return Number(lines.at(-1));
}

test('steps one at a time stay on the first spawner; concurrent steps spread over both', async () => {
  const [first, second] = members.map((m) => m.pid);
  expect(first).toBeDefined();
  expect(second).toBeDefined();
  const sequential: number[] = [];
  for (let i = 0; i < 4; i++) sequential.push(await parentOf('true'));
  expect(sequential).toEqual([first, first, first, first]);
  const concurrent = await Promise.all(Array.from({ length: 6 }, () => parentOf('sleep 0.3')));
  expect(concurrent.filter((pid) => pid === first)).toHaveLength(3);
  expect(concurrent.filter((pid) => pid === second)).toHaveLength(3);
  // Every step ended: nothing is counted open any more.
  expect(members.map((m) => m.open)).toEqual([0, 0]);
  expect(readFileSync(`/proc/${first}/cmdline`, 'utf8')).toContain('step-spawner');
});

test('a pool needs a member', () => {
  expect(() => new SpawnerPool([])).toThrow('at least one spawner');
});
