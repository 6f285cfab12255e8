/**
 * Queues, schedules and subscriptions end to end (036 enqueue / `queue`;
 * dagu-model §1 status 5, §3 `queue` / `max_active_runs` / `schedule`, §8
 * subscriptions): the built stack with two run-service replicas and two
 * gateway replicas behind the round-robin proxy, driven by the MCP SDK client.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';

let stack: Stack;
let client: Client;

type Sc = Record<string, unknown>;
const scOf = (r: CallToolResult): Sc => r.structuredContent ?? {};
/** AUTH_MODE=none: a state-changing REST request needs a body type a form cannot send (issue 17 "Browser rules"). */
const JSON_TYPE = { 'content-type': 'application/json' };

async function execute(args: Record<string, unknown>, via: Client = client): Promise<Sc> {
  const result = await via.request(
    { method: 'tools/call', params: { name: 'dagu_execute', arguments: args } },
    CallToolResultSchema,
    { timeout: 60_000 },
  );
  if (result.isError === true) throw new Error(`execute failed: ${JSON.stringify(result.structuredContent)}`);
  return scOf(result);
}

async function read(args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = toolResult(await client.callTool({ name: 'dagu_read', arguments: args }));
  if (result.isError === true) throw new Error(`read failed: ${JSON.stringify(result.structuredContent)}`);
  const data = result.structuredContent?.data;
  return typeof data === 'object' && data !== null ? Object.fromEntries(Object.entries(data)) : {};
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const runStatus = async (name: string, dagRunId: string): Promise<number> =>
  Number((await read({ target: 'run', name, dagRunId })).status);

async function apply(name: string, spec: string): Promise<void> {
  const applied = await client.callTool({ name: 'dagu_change', arguments: { mode: 'apply', name, spec } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
}

beforeAll(async () => {
  stack = await startStack(
    { RUN_QUEUES: 'default:4,e2e-serial:1', RUN_QUEUE_POLL_MS: '300', RUN_SCHEDULE_REFRESH_MS: '1000' },
    { gatewayReplicas: 2 },
  );
  await stack.spawnApp('run-service');
  client = await connectClient(stack.mcpUrl);
  await apply('q-serial', 'queue: e2e-serial\nmax_active_runs: 5\nsteps:\n  - name: nap\n    run: sleep 3\n');
  await apply('q-mar', 'max_active_runs: 1\nsteps:\n  - name: nap\n    run: sleep 3\n');
  await apply('sub-nap', 'steps:\n  - name: nap\n    run: sleep 2\n');
  await apply('q-plain', 'max_active_runs: 5\nsteps:\n  - name: nap\n    run: sleep 3\n');
}, 90_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

describe('named queues and max_active_runs (036 enqueue; dagu-model §3)', () => {
  test('a queue with concurrency 1 holds the second run at status 5 until the first ends, over two run-service replicas', async () => {
    const first = await execute({ action: 'enqueue', name: 'q-serial' });
    const second = await execute({ action: 'enqueue', name: 'q-serial' });
    expect(first).toMatchObject({ action: 'enqueue', dagName: 'q-serial' });
    const firstId = String(first.dagRunId);
    const secondId = String(second.dagRunId);
    expect(
      await until(
        () => runStatus('q-serial', firstId),
        (s) => s === 1,
      ),
    ).toBe(1);
    // The first is running on one replica; neither replica may start the second.
    for (let i = 0; i < 5; i++) {
      expect(await runStatus('q-serial', secondId)).toBe(5);
      await new Promise((r) => setTimeout(r, 300));
    }
    const detail = await read({ target: 'run', name: 'q-serial', dagRunId: secondId });
    expect(detail).toMatchObject({ status: 5, statusLabel: 'queued', queue: 'e2e-serial' });
    expect(
      await until(
        () => runStatus('q-serial', firstId),
        (s) => s === 4,
      ),
    ).toBe(4);
    expect(
      await until(
        () => runStatus('q-serial', secondId),
        (s) => s === 4,
      ),
    ).toBe(4);
  }, 60_000);

  test('the queue field of 036 overrides the DAG queue', async () => {
    const first = await execute({ action: 'enqueue', name: 'q-plain', queue: 'e2e-serial' });
    const second = await execute({ action: 'enqueue', name: 'q-plain', queue: 'e2e-serial' });
    const firstId = String(first.dagRunId);
    const secondId = String(second.dagRunId);
    expect(
      await until(
        () => runStatus('q-plain', firstId),
        (s) => s === 1,
      ),
    ).toBe(1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await read({ target: 'run', name: 'q-plain', dagRunId: secondId })).toMatchObject({
      status: 5,
      queue: 'e2e-serial',
    });
    expect(
      await until(
        () => runStatus('q-plain', secondId),
        (s) => s === 4,
      ),
    ).toBe(4);
  }, 60_000);

  test('max_active_runs 1 holds a second run of the DAG in a roomy queue', async () => {
    const first = await execute({ action: 'enqueue', name: 'q-mar' });
    const second = await execute({ action: 'enqueue', name: 'q-mar' });
    const firstId = String(first.dagRunId);
    const secondId = String(second.dagRunId);
    expect(
      await until(
        () => runStatus('q-mar', firstId),
        (s) => s === 1,
      ),
    ).toBe(1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await runStatus('q-mar', secondId)).toBe(5);
    expect(
      await until(
        () => runStatus('q-mar', secondId),
        (s) => s === 4,
      ),
    ).toBe(4);
    expect(await runStatus('q-mar', firstId)).toBe(4);
  }, 60_000);
});

describe('resource subscriptions across gateway replicas (dagu-model §8)', () => {
  test('each subscribed session gets one notifications/resources/updated when the run ends, whichever replica holds its stream', async () => {
    const [g0, g1] = stack.gateways;
    if (g0 === undefined || g1 === undefined) throw new Error('two gateways expected');
    // One client per replica, bypassing the proxy: each one's GET stream lives on its own replica.
    const clients = [await connectClient(`${g0.url}/mcp`), await connectClient(`${g1.url}/mcp`)];
    const received: string[][] = [[], []];
    clients.forEach((c, i) =>
      c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void received[i]?.push(n.params.uri)),
    );
    try {
      const started = await execute({ action: 'enqueue', name: 'sub-nap' });
      const runUri = String(started.runUri);
      const logsUri = String(started.logsUri);
      await clients[0]?.subscribeResource({ uri: runUri });
      await clients[1]?.subscribeResource({ uri: logsUri });
      await until(
        async () => received.flat().length,
        (n) => n >= 2,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 1500)); // nothing more may come
      expect(received).toEqual([[runUri], [logsUri]]);
      expect(await runStatus('sub-nap', String(started.dagRunId))).toBe(4);
      // After unsubscribe, a later run's end is not sent.
      await clients[0]?.unsubscribeResource({ uri: runUri });
      const retried = await execute({
        action: 'retry',
        name: 'sub-nap',
        dagRunId: String(started.dagRunId),
        wait: true,
        waitTimeoutSeconds: 30,
      });
      expect(retried.status).toBe(4);
      await until(
        async () => received[1]?.length ?? 0,
        (n) => n >= 2,
        10_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(received).toEqual([[runUri], [logsUri, logsUri]]);
    } finally {
      await Promise.all(clients.map((c) => c?.close()));
    }
  }, 60_000);
});

describe('cron schedules (dagu-model §3 `schedule`)', () => {
  /** Run ids of a DAG's runs (newest first). */
  const runIds = async (name: string): Promise<string[]> => {
    const data = await read({ target: 'runs', query: `name=${name}&limit=50` });
    const items = Array.isArray(data.items) ? data.items : [];
    return items.map((item: unknown) =>
      typeof item === 'object' && item !== null ? String(Object.fromEntries(Object.entries(item)).dagRunId) : '',
    );
  };
  /** The tick time encoded in a scheduled run id (`YYYYMMDDTHHMMSSmmmZ-scheduled`). */
  const tickOf = (id: string): number => {
    const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\d{3})Z-scheduled$/.exec(id);
    if (m === null) throw new Error(`not a scheduled run id: ${id}`);
    return Date.UTC(
      Number(m[1]),
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
      Number(m[7]),
    );
  };

  test('a schedule fires exactly once per tick with two run-service replicas, and follows suspension, updates and deletion', async () => {
    const every = 'schedule: "* * * * *"\nsteps:\n  - name: tick\n    run: echo tick\n';
    await apply('sched-every', every);
    for (const name of ['sched-paused', 'sched-moved', 'sched-gone']) await apply(name, every);
    expect(
      (await fetch(`${stack.baseUrl}/api/v1/dags/sched-paused/suspend`, { method: 'POST', headers: JSON_TYPE })).status,
    ).toBe(200);
    await apply('sched-moved', 'schedule: "0 0 1 1 *"\nsteps:\n  - name: tick\n    run: echo tick\n');
    expect(
      (await fetch(`${stack.baseUrl}/api/v1/dags/sched-gone`, { method: 'DELETE', headers: JSON_TYPE })).status,
    ).toBe(204);
    const settledAt = Date.now();

    // The first minute boundary after the changes (at most ~60 s away), plus time for both replicas to act on it.
    const ids = await until(
      () => runIds('sched-every'),
      (list) => list.some((id) => tickOf(id) > settledAt),
      75_000,
    );
    await new Promise((r) => setTimeout(r, 4000));
    const after = await runIds('sched-every');
    expect(after).toEqual(ids);
    // One run per tick: consecutive minutes, each once (a tick before the changes may have fired too).
    const ticks = after.map(tickOf).sort((a, b) => a - b);
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks.length).toBeLessThanOrEqual(2);
    ticks.forEach((tick, i) => {
      expect(tick % 60_000).toBe(0);
      if (i > 0) expect(tick - (ticks[i - 1] ?? 0)).toBe(60_000);
    });
    expect(ticks[ticks.length - 1]).toBeGreaterThan(settledAt);
    expect(
      await until(
        () => runStatus('sched-every', after[0] ?? ''),
        (s) => s === 4,
      ),
    ).toBe(4);
    // The tick after the changes started no run of the suspended, rescheduled or deleted DAGs.
    for (const name of ['sched-paused', 'sched-moved', 'sched-gone']) {
      expect((await runIds(name)).filter((id) => tickOf(id) > settledAt)).toEqual([]);
    }
  }, 100_000);
});
