/**
 * Graceful shutdown end to end (deployment issue: "a SIGTERM test shows no
 * lost request or job"; CONTRIBUTING §13): while a steady stream of dagu_read
 * calls runs, one dag-service replica gets SIGTERM with a second one up, and
 * the run-service replica running two runs gets SIGTERM with a second one up.
 * Every call must be answered successfully, each stopped replica must exit 0
 * (drained within its bound), the short run must finish on the stopping
 * replica (within `RUN_STOP_GRACE_MS`), and the long one — longer than the
 * grace — must be handed back and finish on the second replica, its finished
 * step kept and only its interrupted step run again.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, freePort, startStack, type Stack } from './stack';

/**
 * nap2 waits for the test's `go` file in the run's working directory, so the
 * run is in progress when SIGTERM comes however long the second replica takes
 * to start, and ends well within the stop grace once the file is there.
 */
const NAP =
  'steps:\n  - name: nap1\n    run: sleep 1\n  - name: nap2\n    depends: nap1\n    run: timeout 60 sh -c "until test -f go; do sleep 0.2; done"\n' +
  '  - name: nap3\n    depends: nap2\n    run: sleep 1\n';
/** `second` outlasts the stop grace the first time it runs, and is quick when it runs again. */
const LONG =
  'steps:\n  - name: first\n    run: echo first\n  - name: second\n    depends: first\n    run: if test -f slept; then sleep 1; else touch slept; sleep 60; fi\n';
/** run-service's stop grace in this stack: the nap run fits in it, the long run does not. */
const STOP_GRACE_MS = 4000;
let stack: Stack;
let client: Client;
let workDir = '';
/** The read stream of the test, stopped by afterAll when the test failed midway. */
let reads: ReturnType<typeof readStream> | undefined;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-shutdown-'));
  stack = await startStack({ RUN_STOP_GRACE_MS: String(STOP_GRACE_MS), RUN_WORK_DIR: workDir });
  client = await connectClient(stack.mcpUrl);
  for (const [name, spec] of [
    ['shutdown-nap', NAP],
    ['shutdown-long', LONG],
  ] as const) {
    const applied = await client.callTool({ name: 'dagu_change', arguments: { mode: 'apply', name, spec } });
    expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
  }
}, 60_000);

afterAll(async () => {
  await reads?.stop();
  await client?.close();
  await stack?.stop();
  if (workDir !== '') await rm(workDir, { recursive: true, force: true });
});

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value))
    : {};
}

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
  if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return record(result.structuredContent);
}

async function readRun(dagRunId: string, name = 'shutdown-nap'): Promise<Record<string, unknown>> {
  return record((await call('dagu_read', { target: 'run', name, dagRunId })).data);
}

async function runStatus(dagRunId: string, name = 'shutdown-nap'): Promise<number> {
  return Number((await readRun(dagRunId, name)).status);
}

async function startRun(name: string): Promise<string> {
  const started = await call('dagu_execute', { action: 'start', name });
  const id = record(started.run).dagRunId ?? started.dagRunId;
  if (typeof id !== 'string') throw new Error(`no dagRunId in ${JSON.stringify(started)}`);
  return id;
}

function stepsOf(run: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const steps = Array.isArray(run.steps) ? run.steps.map(record) : [];
  return new Map(steps.map((step) => [String(step.name), step]));
}

/** Polls until the run leaves running (1) and queued (5), at most `ms`. */
async function endStatus(dagRunId: string, name: string, ms: number): Promise<number> {
  const end = Date.now() + ms;
  let status = await runStatus(dagRunId, name);
  while ((status === 1 || status === 5) && Date.now() < end) {
    await pause(200);
    status = await runStatus(dagRunId, name);
  }
  return status;
}

/** Spawns one more replica of `app` and waits until its `/readyz` answers 200. */
async function spawnReady(app: 'dag-service' | 'run-service'): Promise<ChildProcess> {
  const opsPort = await freePort();
  const child = await stack.spawnApp(app, { OPS_PORT: String(opsPort) });
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${app} replica exited while starting\n${stack.output()}`);
    const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${app} replica did not become ready\n${stack.output()}`);
}

/** Sends SIGTERM and resolves with the exit code (null when killed by a signal). */
function terminate(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** A steady stream of reads over `workers` concurrent loops, until `stop()`. */
function readStream(workers: number, targets: () => Array<Record<string, unknown>>) {
  let running = true;
  let answered = 0;
  const failures: string[] = [];
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = w; running; i++) {
      const list = targets();
      const args = list[i % list.length] ?? { target: 'dags' };
      try {
        await call('dagu_read', args);
        answered++;
      } catch (err) {
        failures.push(`${JSON.stringify(args)}: ${String(err)}`);
      }
    }
  });
  return {
    answered: () => answered,
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('loses no request and no run when a dag-service and a run-service replica are stopped with SIGTERM', async () => {
  const [dagService] = stack.processesOf('dag-service');
  const [runService] = stack.processesOf('run-service');
  if (dagService === undefined || runService === undefined) throw new Error('the stack has no service processes');

  // dag-service: a second replica, then SIGTERM to the first under load.
  await spawnReady('dag-service');
  let dagRunId: string | undefined;
  reads = readStream(6, () => [
    { target: 'dags' },
    { target: 'dag', name: 'shutdown-nap' },
    ...(dagRunId !== undefined ? [{ target: 'run', name: 'shutdown-nap', dagRunId }] : []),
  ]);
  await pause(500);
  const before = reads.answered();
  expect(await terminate(dagService)).toBe(0);
  await pause(500);
  expect(reads.answered()).toBeGreaterThan(before);

  // run-service: two runs start on the only replica; a second replica comes up; SIGTERM to the first mid-run.
  const id = await startRun('shutdown-nap');
  dagRunId = id;
  const longId = await startRun('shutdown-long');
  await spawnReady('run-service');
  expect(await runStatus(id)).toBe(1); // still running (waiting for `go`) when the signal comes
  let longBefore = await readRun(longId, 'shutdown-long');
  for (let i = 0; stepsOf(longBefore).get('second')?.status !== 1 && i < 50; i++) {
    await pause(100);
    longBefore = await readRun(longId, 'shutdown-long');
  }
  expect(stepsOf(longBefore).get('first')?.status).toBe(4);
  expect(stepsOf(longBefore).get('second')?.status).toBe(1);
  await writeFile(join(workDir, 'shutdown-nap', id, 'go'), '');
  const signalled = Date.now();
  const stopping = terminate(runService);
  await pause(300);
  expect(await stopping).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(STOP_GRACE_MS + 5000);

  // The short run finished on the stopping replica (drained) and reads went on.
  expect(await endStatus(id, 'shutdown-nap', 20_000)).toBe(4);
  // The long run was handed back and finished on the second replica: `first` kept, `second` run again.
  expect(await endStatus(longId, 'shutdown-long', 30_000)).toBe(4);
  const after = await readRun(longId, 'shutdown-long');
  expect(after.attemptId).not.toBe(longBefore.attemptId);
  expect(stepsOf(after).get('first')?.startedAt).toBe(stepsOf(longBefore).get('first')?.startedAt);
  expect(Date.parse(String(stepsOf(after).get('second')?.startedAt))).toBeGreaterThan(signalled);
  await pause(500);
  await reads.stop();
  expect(reads.failures).toEqual([]);
  expect(reads.answered()).toBeGreaterThan(20);
}, 90_000);
