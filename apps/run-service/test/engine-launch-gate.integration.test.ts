import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * The launch gate through the engine (issue 28; docs/decisions.md "Starts
 * answered before their runs execute"), against real PostgreSQL: a run
 * started while another start is in flight is recorded `running` at once
 * but executes only when that start is answered; a shutdown meanwhile hands
 * it back like any run of the replica.
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

it('a shutdown hands a held run back, with no step run', async () => {
  env.engine.launchGate.enter();
  const id = await env.start('held-at-stop', 'steps: [{name: s, run: "echo ran"}]\n');
  expect(env.engine.launchGate.heldCount).toBe(1);
  await env.engine.shutdown();
  const handed = await env.detail('held-at-stop', id);
  expect(handed.statusLabel).toBe('queued');
  expect(stepOf(handed, 's').status).toBe(0);
  expect(env.engine.launchGate.heldCount).toBe(0);
  env.engine.launchGate.leave();
});
