import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RunEngine } from '../src/engine/run-engine';
import { RunControlChannel } from '../src/events/run-control';
import type { RunDeps } from '../src/runs/run-deps';
import { stopRun } from '../src/runs/run-stop';
import {
  createReplicaEngine,
  createRunTestEnv,
  stepOf,
  testContext,
  TEST_REDIS_URL,
  type RunTestEnv,
} from '../test-fixtures/run-test-env';

/**
 * Two replicas over one schema: a stop handled by the replica that does not
 * own the run reaches the owner through the Redis control channel at once,
 * or through the owner's heartbeat; a run whose owner is gone (stale
 * heartbeat) is ended directly, and the old owner kills its processes when
 * its heartbeat finds the run ended.
 */
const prefix = `test-run-replicas-${randomUUID().slice(0, 8)}`;
let env: RunTestEnv;
let other: RunEngine;
let control: { a: RunControlChannel; b: RunControlChannel };

function depsOfB(overrides: Partial<RunDeps> = {}): RunDeps {
  return { ...env.deps, engine: other, replica: 'replica-b', requestRemoteStop: async () => undefined, ...overrides };
}

beforeAll(async () => {
  env = await createRunTestEnv('replicas', { heartbeatMs: 4000 });
  other = createReplicaEngine(env, 'replica-b', 'b');
  control = {
    a: new RunControlChannel(TEST_REDIS_URL, prefix, (pk) => void env.engine.stopLocal(pk)),
    b: new RunControlChannel(TEST_REDIS_URL, prefix, (pk) => void other.stopLocal(pk)),
  };
  await Promise.all([control.a.start(), control.b.start()]);
});
afterAll(async () => {
  await other.shutdown();
  await Promise.all([control.a.close(), control.b.close()]);
  await env.close();
  const redis = new Redis(TEST_REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const SLEEP = 'steps: [{name: s, run: "echo $$ > pid; sleep 30"}]\n';

it('a stop on another replica reaches the owner over the control channel at once', async () => {
  const id = await env.start('remote', SLEEP);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const started = Date.now();
  const ref = await stopRun(
    depsOfB({ requestRemoteStop: (pk) => control.b.requestStop(pk) }),
    { dagName: 'remote', dagRunId: id },
    testContext(),
  );
  expect(ref.statusLabel).toBe('aborted');
  expect(Date.now() - started).toBeLessThan(2500);
});

it("without the channel, the owner's heartbeat picks the stop up", async () => {
  const id = await env.start('heartbeat', SLEEP);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await stopRun(depsOfB(), { dagName: 'heartbeat', dagRunId: id }, testContext());
  const detail = await env.waitForEnd('heartbeat', id, 10_000);
  expect(detail.statusLabel).toBe('aborted');
  expect(stepOf(detail, 's').status).toBe(3);
});

it('a run whose owner looks gone is ended directly; the owner then kills its processes', async () => {
  const id = await env.start('orphan', SLEEP);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const pid = Number((await readFile(join(env.config.workDir, 'orphan', id, 'pid'), 'utf8')).trim());
  const impatient = depsOfB({ config: { ...env.config, heartbeatMs: 1 } });
  const ref = await stopRun(impatient, { dagName: 'orphan', dagRunId: id }, testContext());
  expect(ref.statusLabel).toBe('aborted');
  const detail = await env.detail('orphan', id);
  expect(detail.error).toMatch(/no replica was running it/);
  const until = Date.now() + 10_000;
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(alive()).toBe(false);
  expect((await env.detail('orphan', id)).statusLabel).toBe('aborted');
});
