/**
 * Graceful shutdown end to end (deployment issue: "a SIGTERM test shows no
 * lost request or job"; CONVENTIONS §13): while a steady stream of dagu_read
 * calls runs, one dag-service replica gets SIGTERM with a second one up, and
 * the run-service replica running a run gets SIGTERM with a second one up.
 * Every call must be answered successfully, each stopped replica must exit 0
 * (drained within its bound), and the run must finish.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, freePort, startStack, type Stack } from './stack';

const NAP = 'steps:\n  - name: nap1\n    run: sleep 1\n  - name: nap2\n    depends: nap1\n    run: sleep 1\n  - name: nap3\n    depends: nap2\n    run: sleep 1\n';
let stack: Stack;
let client: Client;

beforeAll(async () => {
  stack = await startStack();
  client = await connectClient(stack.mcpUrl);
  const applied = await client.callTool({ name: 'dagu_change', arguments: { mode: 'apply', name: 'shutdown-nap', spec: NAP } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
  if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return record(result.structuredContent);
}

async function runStatus(dagRunId: string): Promise<number> {
  return Number(record((await call('dagu_read', { target: 'run', name: 'shutdown-nap', dagRunId })).data).status);
}

/** Spawns one more replica of `app` and waits until its `/readyz` answers 200. */
async function spawnReady(app: 'dag-service' | 'run-service'): Promise<ChildProcess> {
  const opsPort = await freePort();
  const child = await stack.spawnApp(app, { OPS_PORT: String(opsPort) });
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${app} replica exited while starting\n${stack.output()}`);
    const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`).then((r) => r.status === 200, () => false);
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
  const reads = readStream(6, () => [
    { target: 'dags' },
    { target: 'dag', name: 'shutdown-nap' },
    ...(dagRunId !== undefined ? [{ target: 'run', name: 'shutdown-nap', dagRunId }] : []),
  ]);
  await pause(500);
  const before = reads.answered();
  expect(await terminate(dagService)).toBe(0);
  await pause(500);
  expect(reads.answered()).toBeGreaterThan(before);

  // run-service: a run starts on the only replica; a second replica comes up; SIGTERM to the first mid-run.
  const started = await call('dagu_execute', { action: 'start', name: 'shutdown-nap' });
  const id = record(started.run).dagRunId ?? started.dagRunId;
  if (typeof id !== 'string') throw new Error(`no dagRunId in ${JSON.stringify(started)}`);
  dagRunId = id;
  await spawnReady('run-service');
  expect(await runStatus(id)).toBe(1); // still running when the signal comes
  const stopping = terminate(runService);
  await pause(300);
  expect(await stopping).toBe(0);

  // The run finished (drained by the stopping replica) and reads went on.
  const end = Date.now() + 20_000;
  let status = await runStatus(id);
  while (status === 1 && Date.now() < end) {
    await pause(200);
    status = await runStatus(id);
  }
  expect(status).toBe(4);
  await pause(500);
  await reads.stop();
  expect(reads.failures).toEqual([]);
  expect(reads.answered()).toBeGreaterThan(20);
}, 90_000);
