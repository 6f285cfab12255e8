/**
 * Issue 18 item 1 end to end: the four apps as processes on a PostgreSQL of
 * the test's own, which is shut down (fast: sessions terminated with 57P01,
 * what an operator's restart does) while DAG applies and run starts keep
 * writing. No process may exit; once PostgreSQL is back every app answers
 * and writes again, and a run that was executing across the outage succeeds.
 * Before the fix a checked-out pg client had no `'error'` listener and the
 * event crashed dag-service 5 times out of 5.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../../packages/runtime/test-fixtures/throwaway-postgres';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

let pg: ThrowawayPostgres;
let stack: Stack;
let client: Client;

beforeAll(async () => {
  pg = await startThrowawayPostgres();
  stack = await startStack({ RUN_HEARTBEAT_MS: '500', LOG_LEVEL: 'warn' }, { databaseUrl: pg.url });
  client = await connectClient(stack.mcpUrl);
}, 90_000);

afterAll(async () => {
  await client?.close();
  await pg?.start().catch(() => undefined); // the stack drops its schemas from it
  await stack?.stop();
  await pg?.destroy();
});

const APPS = ['dag-service', 'run-service', 'wiki-service', 'mcp-gateway'] as const;

function exited(): string[] {
  return APPS.flatMap((app) =>
    stack
      .processesOf(app)
      .filter((child) => child.exitCode !== null || child.signalCode !== null)
      .map((child) => `${app} (${String(child.exitCode ?? child.signalCode)})`),
  );
}

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = toolResult(await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 }));
  return { isError: result.isError === true, ...(result.structuredContent ?? {}) };
}

/** Applies and run starts in a loop until `stopped()`: what was writing when PostgreSQL went away. */
async function writeLoad(stopped: () => boolean): Promise<{ ok: number; failed: number }> {
  const counts = { ok: 0, failed: 0 };
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; !stopped(); i++) {
      const name = `load-${w}-${i % 5}`;
      try {
        const applied = await call('dagu_change', {
          mode: 'apply',
          name,
          spec: `steps:\n  - name: s\n    run: echo ${i}\n`,
        });
        const run = await call('dagu_execute', {
          action: 'start',
          name: `run-${w}`,
          spec: 'steps: [{name: s, run: "true"}]\n',
        });
        counts[applied.isError === true || run.isError === true ? 'failed' : 'ok']++;
      } catch {
        counts.failed++;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await Promise.all([0, 1, 2, 3].map(writer));
  return counts;
}

it('a fast PostgreSQL shutdown under write load crashes no process; all write again once it is back', async () => {
  const long = await call('dagu_execute', {
    action: 'start',
    name: 'across-outage',
    spec: 'steps:\n  - name: nap\n    run: for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 1; done\n',
  });
  expect(long.isError).toBe(false);
  let stop = false;
  const load = writeLoad(() => stop);
  let down: string[];
  try {
    await new Promise((r) => setTimeout(r, 1500));
    await pg.stop('fast');
    await new Promise((r) => setTimeout(r, 4000));
    down = exited();
    await pg.start();
    await new Promise((r) => setTimeout(r, 3000));
  } finally {
    stop = true;
  }
  const counts = await load;
  expect(down).toEqual([]);
  expect(exited()).toEqual([]);
  expect(counts.ok).toBeGreaterThan(0);

  // Every app writes again.
  for (const until = Date.now() + 30_000; ;) {
    const applied = await call('dagu_change', {
      mode: 'apply',
      name: 'after-outage',
      spec: 'steps: [{name: s, run: "true"}]\n',
    });
    if (applied.isError === false) break;
    if (Date.now() > until) throw new Error(`no apply after the outage: ${JSON.stringify(applied)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const run = await call('dagu_read', { target: 'run', name: 'across-outage', dagRunId: long.dagRunId });
  const until = Date.now() + 30_000;
  let status = Number((run.data as Record<string, unknown>).status);
  while (status === 1 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 300));
    const again = await call('dagu_read', { target: 'run', name: 'across-outage', dagRunId: long.dagRunId });
    status = Number((again.data as Record<string, unknown>).status);
  }
  expect(status).toBe(4);
  expect(exited()).toEqual([]);
  expect(stack.output()).not.toMatch(/Unhandled 'error' event|uncaughtException/);
}, 120_000);
