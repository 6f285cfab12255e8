/**
 * Process faults under load (issue 18 "the fault suite"): kill -9 of
 * dag-service, wiki-service, run-service and a gateway replica mid-request
 * and mid-run (then a restart, as an orchestrator would), SIGSTOP of a
 * service for 15 s, and pool exhaustion (more concurrent writes than
 * PostgreSQL pool slots). Two gateway replicas behind a round-robin proxy and
 * two run-service replicas, on the suite's own Redis and PostgreSQL. For
 * each: no other process crashes, no caller waits past its deadline, every
 * answer is right or `resource_unavailable` (a gateway kill may also drop
 * the connection of a JSON answer it owed: the caller learns at once), no
 * acknowledged mutation is lost, no run is doubled, no run of a surviving
 * replica fails, and the stack answers again within the stated bound.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { RunStatus } from '@dagu-mcp/contracts';
import { connectClient } from '../e2e/stack';
import { report, sleep, startFaultEnv, timeToRecover, type App, type FaultEnv } from './fault-env';
import { startLoad, summarize, type Outcome } from './load';
import { checkRuns, createWorkload, lostMutations, restJson, settledRuns } from './workload';

/** Recovery bound after a restart or SIGCONT, ms: the process start (~2 s) plus the bus reconnect. */
const RECOVERY_BOUND_MS = 20_000;
/**
 * A restarted gateway replica's own start (its health answering 200) under the CI load the
 * fault suite runs beside: 3–5 s before OAuth, agents, extensions and the console joined the
 * start, 19–20 s in the two CI runs of 2026-12-02 (docs/reliability.md; the slower start is
 * recorded under issue 28). The guarantee of this scenario is the other replica serving every
 * session meanwhile, which the load's outcomes check; this bound only catches a start that hangs.
 */
const GATEWAY_START_BOUND_MS = 45_000;

let env: FaultEnv;
let client: Client;

beforeAll(async () => {
  env = await startFaultEnv({ gatewayReplicas: 2 });
  await env.restart('run-service'); // a second replica: runs of the survivor must not notice a kill
  client = await connectClient(env.stack.mcpUrl);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await env?.stop();
});

/** A REST read that needs `app` (through the proxy), as the recovery probe. */
function probeOf(app: App): () => Promise<boolean> {
  const path = app === 'wiki-service' ? '/wiki/default/pages' : app === 'run-service' ? '/dag-runs?limit=1' : '/dags';
  return async () => {
    const res = await fetch(`${env.stack.baseUrl}/api/v1${path}`, { signal: AbortSignal.timeout(5_000) });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return true;
  };
}

/** The common checks of a scenario; returns the call summary for the report. */
async function checkAfter(
  outcomes: readonly Outcome[],
  runDag: string,
  opts: { allowDisconnected?: boolean; failedRunsAllowed?: number } = {},
): Promise<string> {
  const summary = summarize(outcomes);
  expect(env.crashes()).toEqual([]);
  expect({ wrong: summary.wrong, hung: summary.hung, samples: summary.samples }).toEqual({
    wrong: 0,
    hung: 0,
    samples: [],
  });
  if (opts.allowDisconnected !== true) expect(summary.disconnected).toBe(0);
  expect(summary.ok).toBeGreaterThan(0);
  expect(await lostMutations(env.stack.baseUrl, outcomes)).toEqual([]);
  const runs = checkRuns(outcomes, await settledRuns(env.stack.baseUrl, runDag, 150_000));
  expect(runs.missing).toBe(0);
  expect(runs.doubled).toBe(0);
  expect(runs.failed.length).toBeLessThanOrEqual(opts.failedRunsAllowed ?? 0);
  return `${outcomes.length} calls: ${summary.ok} ok, ${summary.unavailable} unavailable, ${summary.disconnected} disconnected; ${runs.failed.length} runs failed`;
}

/** Runs of `dagName` running right now (the ones a run-service kill may take down). */
async function runningNow(dagName: string): Promise<number> {
  const body = await restJson(env.stack.baseUrl, `/dag-runs?name=${dagName}&status=${RunStatus.running}&limit=500`);
  return Array.isArray(body.items) ? body.items.length : 0;
}

describe.each(['dag-service', 'wiki-service', 'run-service'] as const)(
  'kill -9 of %s mid-request and mid-run',
  (app) => {
    test('no crash elsewhere, no hang, right or resource_unavailable, nothing lost or doubled, recovery bounded', async () => {
      const workload = createWorkload(env.stack.baseUrl, `k${app.slice(0, 3)}`, 4);
      await workload.prepare(client);
      const load = await startLoad(env.stack.mcpUrl, workload.ops, 3, 50);
      await sleep(3_000);
      const inFlight = app === 'run-service' ? await runningNow(workload.runDag) : 0;
      await env.kill(app);
      await sleep(1_000);
      await env.restart(app);
      const recoveryMs = await timeToRecover(probeOf(app), RECOVERY_BOUND_MS);
      await sleep(3_000);
      const outcomes = await load.stop();
      // A killed run-service replica's own runs end failed by the recovery sweep (their steps died with
      // it, run-service README); the other replica's runs and every later run succeed.
      const calls = await checkAfter(outcomes, workload.runDag, { failedRunsAllowed: inFlight });
      report({
        fault: `kill -9 ${app} (restarted after 1 s)`,
        guarantee: 'no other crash, no hang, right or resource_unavailable, nothing lost/doubled, survivors unaffected',
        test: `test/faults/process-faults.fault.test.ts "kill -9 of ${app}"`,
        recoveryMs,
        boundMs: RECOVERY_BOUND_MS,
        calls,
      });
    });
  },
);

test('kill -9 of a gateway replica mid-request: the other serves every session; a lost JSON answer is a dropped connection', async () => {
  const workload = createWorkload(env.stack.baseUrl, 'kgw', 2);
  await workload.prepare(client);
  const load = await startLoad(env.stack.mcpUrl, workload.ops, 3, 20);
  await sleep(3_000);
  const gateway = env.stack.gateways[0];
  if (gateway === undefined) throw new Error('no gateway');
  await env.killGateway(0);
  await sleep(1_000);
  await env.restart('mcp-gateway', { PORT: String(gateway.port) });
  const recoveryMs = await timeToRecover(async () => {
    const res = await fetch(`${gateway.url}/api/v1/health`, { signal: AbortSignal.timeout(5_000) });
    return res.status === 200;
  }, GATEWAY_START_BOUND_MS);
  await sleep(3_000);
  const outcomes = await load.stop();
  const calls = await checkAfter(outcomes, workload.runDag, { allowDisconnected: true });
  report({
    fault: 'kill -9 gateway replica (restarted after 1 s)',
    guarantee: 'sessions survive; no hang; right, resource_unavailable or a dropped connection; nothing lost/doubled',
    test: 'test/faults/process-faults.fault.test.ts "kill -9 of a gateway replica"',
    recoveryMs,
    boundMs: GATEWAY_START_BOUND_MS,
    calls,
  });
});

test('SIGSTOP of dag-service for 15 s: callers get resource_unavailable at their deadline, then answers resume', async () => {
  const workload = createWorkload(env.stack.baseUrl, 'stop', 2);
  await workload.prepare(client);
  const load = await startLoad(env.stack.mcpUrl, workload.ops, 3, 50);
  await sleep(2_000);
  const frozen = env.stack.processesOf('dag-service').filter((c) => c.exitCode === null && c.signalCode === null);
  for (const child of frozen) child.kill('SIGSTOP');
  await sleep(15_000);
  for (const child of frozen) child.kill('SIGCONT');
  const recoveryMs = await timeToRecover(probeOf('dag-service'), RECOVERY_BOUND_MS);
  await sleep(3_000);
  const outcomes = await load.stop();
  const calls = await checkAfter(outcomes, workload.runDag);
  expect(outcomes.some((o) => o.kind === 'unavailable')).toBe(true);
  report({
    fault: 'SIGSTOP dag-service 15 s',
    guarantee: 'no hang past the deadline (resource_unavailable), nothing applied after its deadline, recovery bounded',
    test: 'test/faults/process-faults.fault.test.ts "SIGSTOP of dag-service"',
    recoveryMs,
    boundMs: RECOVERY_BOUND_MS,
    calls,
  });
});

test('pool exhaustion: 60 concurrent applies and page writes against pools of 10 slots', async () => {
  const workload = createWorkload(env.stack.baseUrl, 'pool', 1);
  const [, apply, , wikiPut] = workload.ops;
  if (apply === undefined || wikiPut === undefined) throw new Error('workload ops');
  const clients = await Promise.all(Array.from({ length: 6 }, () => connectClient(env.stack.mcpUrl)));
  const started = Date.now();
  const outcomes = await Promise.all(
    Array.from({ length: 60 }, (_, i) => {
      const c = clients[i % clients.length] ?? client;
      return (i % 2 === 0 ? apply : wikiPut)(c, 10_000 + i);
    }),
  );
  const tookMs = Date.now() - started;
  await Promise.all(clients.map((c) => c.close()));
  const summary = summarize(outcomes);
  expect(env.crashes()).toEqual([]);
  expect({ wrong: summary.wrong, hung: summary.hung, samples: summary.samples }).toEqual({
    wrong: 0,
    hung: 0,
    samples: [],
  });
  expect(summary.disconnected).toBe(0);
  expect(await lostMutations(env.stack.baseUrl, outcomes)).toEqual([]);
  report({
    fault: 'pool exhaustion (60 concurrent writes)',
    guarantee: 'queued, not failed: right or resource_unavailable, nothing lost, no hang',
    test: 'test/faults/process-faults.fault.test.ts "pool exhaustion"',
    recoveryMs: tookMs,
    boundMs: 30_000,
    calls: `${outcomes.length} calls: ${summary.ok} ok, ${summary.unavailable} unavailable`,
  });
});
