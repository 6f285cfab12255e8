import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * The launch gate through the engine (issue 28; docs/decisions.md "Starts
 * answered before their runs execute"), against real PostgreSQL: a run
 * started while another start is in flight is recorded `running` at once
 * but executes only when that start is answered. Held, it is already the
 * replica's: a stop aborts it without running a step, and a shutdown lets
 * it run within the grace period, then hands it back.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('gate', { stopGraceMs: 500 });
});
afterAll(() => env.close());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

it('holds a run while another start is in flight, and runs it once that start is answered', async () => {
  env.engine.launchGate.enter(); // another start, still being accepted
  const id = await env.start('held', 'steps: [{name: s, run: "true"}]\n');
  await sleep(200);
  const held = await env.detail('held', id);
  expect(held.statusLabel).toBe('running');
  expect(stepOf(held, 's').status).toBe(0);
  expect(env.engine.launchGate.heldCount).toBe(1);
  env.engine.launchGate.leave(); // that start was answered
  expect((await env.waitForEnd('held', id)).statusLabel).toBe('succeeded');
});

it('a stop of a held run aborts it, and its step never runs', async () => {
  env.engine.launchGate.enter();
  const id = await env.start('held-stopped', 'steps: [{name: s, run: "echo ran"}]\n');
  expect(env.engine.launchGate.heldCount).toBe(1);
  const pk = Number((await env.pool.query('SELECT pk FROM runs WHERE dag_run_id = $1', [id])).rows[0].pk);
  const stopped = env.engine.stopLocal(pk);
  expect(stopped).not.toBe(false);
  env.engine.launchGate.leave();
  await stopped;
  const ended = await env.waitForEnd('held-stopped', id);
  expect(ended.statusLabel).toBe('aborted');
  expect(stepOf(ended, 's').status).not.toBe(4);
});

it('a shutdown lets a held run go within the grace period, then hands it back', async () => {
  env.engine.launchGate.enter();
  const id = await env.start('held-at-stop', 'steps: [{name: s, run: "sleep 30"}]\n');
  expect(env.engine.launchGate.heldCount).toBe(1);
  await env.engine.shutdown();
  const handed = await env.detail('held-at-stop', id);
  expect(handed.statusLabel).toBe('queued');
  expect(env.engine.launchGate.heldCount).toBe(0);
  env.engine.launchGate.leave();
});
