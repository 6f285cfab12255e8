/**
 * Issue 18 item 6 end to end: a run-service replica killed with -9 mid-step
 * leaves no step process behind once it restarts on the same host. Alone,
 * run-service's death makes its step spawner kill the steps' groups
 * (process-spawner.test.ts); a host-level kill takes both at once, and then
 * the step's shell and what it started in the background are re-parented to
 * init and keep running, so a retry could run the same work twice at once.
 * The restarted replica kills the process groups the dead one recorded
 * (`RUN_STATE_DIR`), before it runs anything.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, freePort, startStack, type Stack } from './stack';
import { isAlive } from '../../apps/run-service/test-fixtures/process-alive';

let stack: Stack;
let client: Client;
let workDir = '';
let markers = '';

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-orphans-'));
  markers = await mkdtemp(join(tmpdir(), 'e2e-orphans-markers-'));
  stack = await startStack({ RUN_WORK_DIR: workDir, RUN_HEARTBEAT_MS: '500' });
  client = await connectClient(stack.mcpUrl);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
  for (const dir of [workDir, markers]) if (dir !== '') await rm(dir, { recursive: true, force: true });
});

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  for (const until = Date.now() + ms; !(await ok());) {
    if (Date.now() > until) throw new Error(`${what} within ${ms} ms\n${stack.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The pids of run-service `pid`'s step spawners (its children running native/step-spawner; `RUN_STEP_SPAWNERS`). */
async function spawnersOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    if (!new RegExp(`^PPid:\\s+${pid}$`, 'm').test(status)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('step-spawner')) found.push(Number(entry));
  }
  if (found.length === 0) throw new Error(`run-service ${pid} has no step spawner`);
  return found;
}

it('a replica restarted after kill -9 kills the step processes the dead one left', async () => {
  // The markers directory is world-writable so a step user could write there too.
  await import('node:fs/promises').then((fs) => fs.chmod(markers, 0o777));
  const spec =
    'steps:\n  - name: long\n    run: sleep 300 & echo $! > ' +
    `${markers}/child.pid; echo $$ > ${markers}/shell.pid; wait\n`;
  const started = await client.callTool({
    name: 'dagu_execute',
    arguments: { action: 'start', name: 'orphans', spec },
  });
  expect(started.isError).not.toBe(true);
  const childPidFile = join(markers, 'child.pid');
  await waitFor('the step started', () => existsSync(join(markers, 'shell.pid')), 20_000);
  const child = Number((await readFile(childPidFile, 'utf8')).trim());
  expect(isAlive(child)).toBe(true);

  const [replica] = stack.processesOf('run-service');
  if (replica?.pid === undefined) throw new Error('no run-service process');
  // run-service's step spawner kills the steps' groups when run-service dies (its IPC channel closes).
  // A host-level kill takes them all at once: freeze the spawners so they cannot act, then kill all.
  const spawners = await spawnersOf(replica.pid);
  for (const spawner of spawners) process.kill(spawner, 'SIGSTOP');
  await new Promise<void>((resolve) => {
    replica.once('exit', () => resolve());
    replica.kill('SIGKILL');
  });
  for (const spawner of spawners) process.kill(spawner, 'SIGKILL');
  // The background child survives its replica (re-parented to init): the orphan of the issue.
  await new Promise((r) => setTimeout(r, 1000));
  expect(isAlive(child)).toBe(true);

  const opsPort = await freePort();
  const restarted = await stack.spawnApp('run-service', { OPS_PORT: String(opsPort) });
  await waitFor('the restarted replica killed the orphan', () => !isAlive(child), 20_000);
  expect(restarted.exitCode).toBeNull();
  expect(stack.output()).toContain('killed the step process groups a stopped run-service of this host left behind');
}, 90_000);
