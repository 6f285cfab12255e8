import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusClient } from '@dagu-mcp/bus';
import {
  RunEventSchema,
  runEventsChannel,
  runOps,
  type OpRequest,
  type RunDetail,
  type RunEvent,
  type RunOps,
} from '@dagu-mcp/contracts';
import { createLogger, createPool, type Pool } from '@dagu-mcp/runtime';
import type { RunningService } from '@dagu-mcp/service-kit';
import { Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../../../packages/bus/test-fixtures/bus-test-env';
import { defaultRunConfig } from '../src/config/run-config';
import { startDeployedRunService } from '../test-fixtures/deployed-run-service';
import { randomSchemaName, stepOf, TEST_DATABASE_URL, TEST_REDIS_URL } from '../test-fixtures/run-test-env';

/**
 * Hand-back on shutdown (deployment issue: "runs in progress are not lost";
 * CONTRIBUTING §13), with run-service as deployed: two replicas (service-kit
 * host, BullMQ worker, engine) over one PostgreSQL schema and one Redis
 * prefix. The replica that owns a run is stopped the way SIGTERM stops it
 * (`RunningService.stop`, the `onStop` of `run-service.ts`) with a stop grace
 * shorter than the run: the run is handed back to the queue and the other
 * replica finishes it within a few queue polls — the finished step is not
 * run again, the interrupted one is.
 */
const prefix = `test-run-handback-${randomUUID().slice(0, 8)}`;
const schema = randomSchemaName('handback');
const principal = { id: 'user-1', subject: 'alice', role: 'admin' as const, credentialType: 'api_key' as const };
const logger = createLogger({ name: 'run-service-handback-test', level: 'silent' });
const replicas: RunningService[] = [];
let client: BusClient;
let subscriber: Redis;
let pool: Pool;
let workDir = '';
const events: RunEvent[] = [];

async function startReplica(): Promise<RunningService> {
  // Heartbeats every 5 s: a run taken for orphaned would need 15 s; the hand-back must be far quicker.
  // No cron scheduler: there is no dag-service to list schedules from.
  const runConfig = defaultRunConfig({
    workDir,
    queuePollMs: 200,
    heartbeatMs: 5000,
    stopGraceMs: 500,
    killGraceMs: 2000,
    scheduler: false,
  });
  const service = await startDeployedRunService(schema, prefix, runConfig, logger);
  replicas.push(service);
  return service;
}

async function stopReplica(replica: string): Promise<number> {
  const index = replicas.findIndex((service) => service.replica === replica);
  const service = replicas[index];
  if (service === undefined) throw new Error(`no running replica ${replica}`);
  replicas.splice(index, 1);
  const started = Date.now();
  await service.stop();
  return Date.now() - started;
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'run-handback-test-'));
  subscriber = new Redis(TEST_REDIS_URL);
  subscriber.on('message', (_channel: string, message: string) => {
    const parsed = RunEventSchema.safeParse(JSON.parse(message));
    if (parsed.success) events.push(parsed.data);
  });
  await subscriber.subscribe(runEventsChannel(prefix));
  await startReplica();
  await startReplica();
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 10_000 });
  await client.start();
  pool = createPool({ url: TEST_DATABASE_URL, schema, logger });
});

afterAll(async () => {
  await client.close();
  for (const service of replicas.splice(0)) await service.stop();
  subscriber.disconnect();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  await rm(workDir, { recursive: true, force: true });
});

const call = <K extends keyof RunOps>(op: K, payload: OpRequest<RunOps, K>) =>
  client.call('run', runOps, op, payload, { principal });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function detail(dagName: string, dagRunId: string): Promise<RunDetail> {
  return call('run.get', { dagName, dagRunId });
}

/** Polls the run until `done(detail)` holds. */
async function until(
  dagName: string,
  dagRunId: string,
  done: (run: RunDetail) => boolean,
  timeoutMs = 15_000,
): Promise<RunDetail> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const run = await detail(dagName, dagRunId);
    if (done(run)) return run;
    if (Date.now() > end)
      throw new Error(`run ${dagRunId} did not get there within ${timeoutMs} ms: ${JSON.stringify(run)}`);
    await pause(50);
  }
}

async function ownerOf(dagRunId: string): Promise<string | null> {
  const result = await pool.query<{ owner: string | null }>('SELECT owner FROM runs WHERE dag_run_id = $1', [dagRunId]);
  return result.rows[0]?.owner ?? null;
}

function statusesOf(dagRunId: string): number[] {
  return events.filter((event) => event.dagRunId === dagRunId).map((event) => event.status);
}

it('a run the stopping replica cannot finish is handed back; the other replica re-runs only the unfinished step', async () => {
  const spec =
    'steps:\n  - {name: first, run: "echo first >> first.log"}\n  - {name: second, run: "echo run >> second.log; sleep 2", depends: [first]}\n';
  const ref = await call('run.start', { dagName: 'handback', spec, inline: true, enqueue: false });
  const before = await until(
    'handback',
    ref.dagRunId,
    (run) => stepOf(run, 'first').status === 4 && stepOf(run, 'second').status === 1,
  );
  const owner = await ownerOf(ref.dagRunId);
  const other = replicas.find((service) => service.replica !== owner)?.replica;
  if (owner === null || other === undefined) throw new Error(`unexpected owner ${String(owner)}`);

  const stopMs = await stopReplica(owner);
  expect(stopMs).toBeLessThan(5000);
  const handed = await detail('handback', ref.dagRunId);
  expect(handed.status === 5 || handed.status === 1).toBe(true); // queued, or already claimed by the other replica

  const done = await until('handback', ref.dagRunId, (run) => ![1, 5].includes(run.status));
  expect(done).toMatchObject({ statusLabel: 'succeeded' });
  expect(done.attemptId).not.toBe(ref.attemptId);
  expect(await ownerOf(ref.dagRunId)).toBe(other);
  // The finished step kept its result (same start) and did not run again; the interrupted one ran twice.
  expect(stepOf(done, 'first')).toMatchObject({ status: 4, startedAt: stepOf(before, 'first').startedAt });
  expect(stepOf(done, 'second').status).toBe(4);
  expect(Date.parse(stepOf(done, 'second').startedAt ?? '')).toBeGreaterThan(
    Date.parse(stepOf(before, 'second').startedAt ?? ''),
  );
  const runDir = join(workDir, 'handback', ref.dagRunId);
  expect(await readFile(join(runDir, 'first.log'), 'utf8')).toBe('first\n');
  expect(await readFile(join(runDir, 'second.log'), 'utf8')).toBe('run\nrun\n');

  // Events on Redis: running, handed back (queued, new attempt), running again on the other replica, succeeded.
  await pause(100);
  expect(statusesOf(ref.dagRunId)).toEqual([1, 5, 1, 4]);
  const runEvents = events.filter((event) => event.dagRunId === ref.dagRunId);
  const queued = runEvents[1];
  const resumed = runEvents[2];
  if (queued === undefined || resumed === undefined) throw new Error('missing events');
  expect(queued.attemptId).toBe(done.attemptId);
  expect(Date.parse(resumed.at) - Date.parse(queued.at)).toBeLessThan(2000);
  const log = await call('run.logs', { dagName: 'handback', dagRunId: ref.dagRunId });
  expect(JSON.stringify(log)).toContain('handing back: run-service replica');
}, 40_000);

it('a parent run is handed back; its interrupted child run ends, and the parent starts a new one elsewhere', async () => {
  await startReplica();
  const spec = `steps:
  - {name: prep, run: "echo prep >> prep.log"}
  - name: call
    action: dag.run
    with: {dag: kid}
    depends: [prep]
---
name: kid
steps:
  - {name: nap, run: "echo kid >> ${workDir}/kid.log; sleep 2"}
`;
  const ref = await call('run.start', { dagName: 'parent', spec, inline: true, enqueue: false });
  await until('parent', ref.dagRunId, (run) => stepOf(run, 'call').status === 1);
  await pause(300);
  const owner = await ownerOf(ref.dagRunId);
  if (owner === null) throw new Error('no owner');
  expect(await stopReplica(owner)).toBeLessThan(5000);

  const done = await until('parent', ref.dagRunId, (run) => ![1, 5].includes(run.status));
  expect(done.statusLabel).toBe('succeeded');
  expect(await ownerOf(ref.dagRunId)).not.toBe(owner);
  expect(await readFile(join(workDir, 'parent', ref.dagRunId, 'prep.log'), 'utf8')).toBe('prep\n');
  expect(await readFile(join(workDir, 'kid.log'), 'utf8')).toBe('kid\nkid\n');
  const kids = await pool.query<{ status: number; owner: string | null }>(
    "SELECT status, owner FROM runs WHERE dag_name = 'kid' ORDER BY pk",
  );
  expect(kids.rows).toHaveLength(2);
  expect([2, 3]).toContain(kids.rows[0]?.status);
  expect(kids.rows[0]?.owner).toBe(owner);
  expect(kids.rows[1]).toMatchObject({ status: 4 });
  expect(kids.rows[1]?.owner).not.toBe(owner);
}, 40_000);

it('a parent waiting on a child human task is handed back; its next attempt adopts the same parked child', async () => {
  await startReplica();
  const spec = `steps:
  - {name: prep, run: "echo prep >> prep.log"}
  - name: call
    action: dag.run
    with: {dag: asker}
    depends: [prep]
  - {name: after, run: "echo after", depends: [call]}
---
name: asker
steps:
  - {name: early, run: "echo early >> ${workDir}/asker.log"}
  - id: ask
    action: human.task
    with: {prompt: "Go on?"}
    depends: [early]
`;
  const kids = async () =>
    (
      await pool.query<{ dag_run_id: string; status: number; owner: string | null }>(
        "SELECT dag_run_id, status, owner FROM runs WHERE dag_name = 'asker' ORDER BY pk",
      )
    ).rows;
  const ref = await call('run.start', { dagName: 'adopter', spec, inline: true, enqueue: false });
  await until('adopter', ref.dagRunId, (run) => run.status === 7);
  const parked = await kids();
  expect(parked).toEqual([{ dag_run_id: expect.any(String) as string, status: 7, owner: null }]);
  const childId = parked[0]?.dag_run_id ?? '';
  const owner = await ownerOf(ref.dagRunId);
  if (owner === null) throw new Error('no owner');

  expect(await stopReplica(owner)).toBeLessThan(5000);
  // The parked child was left alone: same run, still waiting at its human task.
  expect(await kids()).toEqual([{ dag_run_id: childId, status: 7, owner: null }]);
  // The handed-back root is claimed elsewhere and waits on the same child again.
  // The adopting step shows waiting (7) like its run (dagu-model §3 "Run outcome"); its write may trail the run's.
  const waiting = await until(
    'adopter',
    ref.dagRunId,
    (run) => run.status === 7 && run.attemptId !== ref.attemptId && stepOf(run, 'call').status === 7,
  );
  expect(await ownerOf(ref.dagRunId)).not.toBe(owner);
  expect(stepOf(waiting, 'prep').status).toBe(4);

  await call('run.humanTask', { dagName: 'asker', dagRunId: childId, stepName: 'ask', values: {} });
  const done = await until('adopter', ref.dagRunId, (run) => ![1, 5, 7].includes(run.status));
  expect(done.statusLabel).toBe('succeeded');
  expect(stepOf(done, 'after').status).toBe(4);
  expect(await kids()).toEqual([{ dag_run_id: childId, status: 4, owner: expect.any(String) as string }]);
  expect(await readFile(join(workDir, 'asker.log'), 'utf8')).toBe('early\n');
  expect(await readFile(join(workDir, 'adopter', ref.dagRunId, 'prep.log'), 'utf8')).toBe('prep\n');
  const log = JSON.stringify(await call('run.logs', { dagName: 'adopter', dagRunId: ref.dagRunId }));
  expect(log).toContain(`sub-DAG run adopted: asker ${childId}`);
}, 40_000);

it('handed-back runs were already admitted: max_active_runs does not hold them in the queue', async () => {
  const spec = 'steps:\n  - {name: nap, run: "sleep 8"}\n';
  // Both started (not enqueued): both run at once, although the DAG allows one active run (max_active_runs 1).
  const a = await call('run.start', { dagName: 'single', spec, inline: true, enqueue: false });
  const b = await call('run.start', { dagName: 'single', spec, inline: true, enqueue: false });
  await until('single', a.dagRunId, (run) => stepOf(run, 'nap').status === 1);
  await until('single', b.dagRunId, (run) => stepOf(run, 'nap').status === 1);
  await startReplica(); // started after the runs: owns neither
  const owners = new Set([await ownerOf(a.dagRunId), await ownerOf(b.dagRunId)]);
  if (owners.has(null)) throw new Error('a run has no owner');
  const stopped = [...owners].filter((owner): owner is string => owner !== null);
  await Promise.all(stopped.map((owner) => stopReplica(owner)));

  // Both are claimed by a live replica within a few queue polls, although each DAG allows one active run.
  const claimed = (run: RunDetail) =>
    run.status === 1 && run.attemptId !== a.attemptId && run.attemptId !== b.attemptId;
  await until('single', a.dagRunId, claimed, 3000);
  await until('single', b.dagRunId, claimed, 3000);
  for (const id of [a.dagRunId, b.dagRunId]) expect(stopped).not.toContain(await ownerOf(id));
  const flags = await pool.query<{ handed_back: boolean }>("SELECT handed_back FROM runs WHERE dag_name = 'single'");
  expect(flags.rows.map((row) => row.handed_back)).toEqual([false, false]);
  for (const id of [a.dagRunId, b.dagRunId])
    expect((await until('single', id, (run) => ![1, 5].includes(run.status), 20_000)).statusLabel).toBe('succeeded');
}, 60_000);
