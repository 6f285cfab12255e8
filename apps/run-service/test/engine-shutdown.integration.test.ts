import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunEngine } from '../src/engine/run-engine';
import { createReplicaEngine, createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Graceful shutdown of a replica (CONTRIBUTING §13 "finish or hand back
 * in-flight jobs"; README "Shutdown"): runs that end within RUN_STOP_GRACE_MS
 * finish normally; the others are killed and handed back to the queue
 * (status queued, a new attempt that keeps the finished steps); queued runs
 * stay queued. With no other replica, the next replica to start (here: the
 * same one, restarted) resumes the handed-back runs.
 */
let env: RunTestEnv;
let restarted: RunEngine | undefined;

beforeAll(async () => {
  env = await createRunTestEnv('shutdown', { stopGraceMs: 800 });
});
afterAll(async () => {
  await restarted?.shutdown();
  await env.close();
});

/** Sleeps 30 s the first time it runs in a run's work dir, returns at once afterwards. */
const ONCE_LONG = '"echo run >> long.log; if [ -f slept ]; then true; else touch slept; sleep 30; fi"';

it('lets short runs finish, hands long ones back after the grace period, leaves queued runs queued; a restart resumes them', async () => {
  const short = await env.start('short', 'steps: [{name: s, run: sleep 0.2}]\n');
  const long = await env.start(
    'long',
    `handler_on: {exit: {run: echo exit-handler}}\nsteps: [{name: f, run: "echo first >> first.log"}, {name: s, run: ${ONCE_LONG}, depends: [f]}, {name: t, run: "true", depends: [s]}]\n`,
  );
  const blocker = await env.start('queued', `steps: [{name: s, run: ${ONCE_LONG}}]\n`);
  const waiting = await env.start('queued', 'steps: [{name: s, run: "true"}]\n', { enqueue: true });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = await env.detail('long', long);
  expect(stepOf(before, 'f').status).toBe(4);
  const started = Date.now();
  await env.engine.shutdown();
  expect(Date.now() - started).toBeLessThan(4000);
  expect((await env.detail('short', short)).statusLabel).toBe('succeeded');

  const handed = await env.detail('long', long);
  expect(handed).toMatchObject({ statusLabel: 'queued' });
  expect(handed.attemptId).not.toBe(before.attemptId);
  expect(handed.startedAt).toBeUndefined();
  expect(stepOf(handed, 'f')).toMatchObject({ status: 4, startedAt: stepOf(before, 'f').startedAt });
  expect(stepOf(handed, 's').status).toBe(0);
  expect(stepOf(handed, 't').status).toBe(0);
  const attempts = await env.pool.query<{ attempt_no: number; status: number }>(
    `SELECT a.attempt_no, a.status FROM run_attempts a JOIN runs r ON r.pk = a.run_pk WHERE r.dag_run_id = $1 ORDER BY a.attempt_no`,
    [long],
  );
  expect(attempts.rows).toEqual([
    { attempt_no: 1, status: 3 },
    { attempt_no: 2, status: 5 },
  ]);
  const old = await env.pool.query<{ name: string; status: number; error: string | null }>(
    `SELECT s.name, s.status, s.error FROM run_steps s JOIN runs r ON r.pk = s.run_pk WHERE r.dag_run_id = $1 AND s.attempt_no = 1 AND s.handler IS NULL ORDER BY s.seq`,
    [long],
  );
  expect(old.rows).toEqual([
    { name: 'f', status: 4, error: null },
    {
      name: 's',
      status: 3,
      error: 'interrupted: run-service replica test-replica stopped; the step runs again in attempt 2',
    },
    { name: 't', status: 0, error: null },
  ]);
  expect((await env.detail('queued', blocker)).statusLabel).toBe('queued');
  expect((await env.detail('queued', waiting)).statusLabel).toBe('queued');
  expect(env.publisher.events.filter((event) => event.dagRunId === long).map((event) => event.statusLabel)).toEqual([
    'running',
    'queued',
  ]);

  // No other replica: the restarted one claims the handed-back runs (the oldest first) and finishes them.
  restarted = createReplicaEngine(env, 'test-replica', 'restarted');
  restarted.start();
  const done = await env.waitForEnd('long', long, 15_000);
  expect(done.statusLabel).toBe('succeeded');
  expect(done.attemptId).toBe(handed.attemptId);
  expect(stepOf(done, 'f').startedAt).toBe(stepOf(before, 'f').startedAt);
  const workDir = join(env.config.workDir, 'long', long);
  expect(await readFile(join(workDir, 'first.log'), 'utf8')).toBe('first\n');
  expect(await readFile(join(workDir, 'long.log'), 'utf8')).toBe('run\nrun\n');
  expect((await env.waitForEnd('queued', blocker, 15_000)).statusLabel).toBe('succeeded');
  expect((await env.waitForEnd('queued', waiting, 15_000)).statusLabel).toBe('succeeded');
});
