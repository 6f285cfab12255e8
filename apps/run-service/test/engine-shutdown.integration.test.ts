import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Graceful shutdown of a replica (CONVENTIONS §13; README "Shutdown"):
 * runs that end within RUN_STOP_GRACE_MS finish normally; the others are
 * killed and failed with "run-service replica stopped"; queued runs stay
 * queued for other replicas.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('shutdown', { stopGraceMs: 800 });
});
afterAll(async () => {
  await env.close();
});

it('lets short runs finish, fails long ones after the grace period, leaves queued runs queued', async () => {
  const short = await env.start('short', 'steps: [{name: s, run: sleep 0.2}]\n');
  const long = await env.start('long', 'handler_on: {exit: {run: echo exit-handler}}\nsteps: [{name: s, run: sleep 30}, {name: t, run: "true", depends: [s]}]\n');
  const blocker = await env.start('queued', 'steps: [{name: s, run: sleep 30}]\n');
  const waiting = await env.start('queued', 'steps: [{name: s, run: "true"}]\n', { enqueue: true });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = Date.now();
  await env.engine.shutdown();
  expect(Date.now() - started).toBeLessThan(4000);
  expect((await env.detail('short', short)).statusLabel).toBe('succeeded');
  const failed = await env.detail('long', long);
  expect(failed).toMatchObject({ statusLabel: 'failed', error: 'run-service replica stopped' });
  expect(stepOf(failed, 's')).toMatchObject({ status: 2, error: 'run-service replica stopped' });
  expect(stepOf(failed, 't').status).toBe(3);
  expect((await env.detail('queued', blocker)).statusLabel).toBe('failed');
  expect((await env.detail('queued', waiting)).statusLabel).toBe('queued');
  expect(env.publisher.events.filter((event) => event.dagRunId === long).map((event) => event.statusLabel)).toEqual(['running', 'failed']);
});
