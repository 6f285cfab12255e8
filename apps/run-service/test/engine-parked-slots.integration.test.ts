import { RunStatus, type RunDetail } from '@dagu-mcp/contracts';
import { completeHumanTask } from '../src/runs/checkpoint-resume';
import { createRunTestEnv, testContext, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Issue 18 item 8 against the real PostgreSQL: a run parked at a checkpoint
 * (human task, approval) executes nothing, so it holds no queue slot; its
 * DAG's `max_active_runs` still counts it. Nine parked runs on a queue of
 * eight slots used to stall every later run of that queue.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('parked', { queueConcurrency: 8 });
});
afterAll(async () => {
  await env.close();
});

const PARKING = `steps:
  - id: review
    action: human.task
    with:
      prompt: Go on?
  - id: after
    depends: [review]
    run: echo resumed
`;
const ONE_STEP = 'steps: [{name: s, run: "echo quick"}]\n';

async function waitForStatus(name: string, id: string, status: number, timeoutMs = 15_000): Promise<RunDetail> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = await env.detail(name, id);
    if (run.status === status) return run;
    if (Date.now() > until) throw new Error(`run ${name}/${id} is ${run.statusLabel}, expected ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('nine parked runs leave the queue free; max_active_runs still counts them; a decision resumes without the queue', async () => {
  const parked: Array<{ name: string; id: string }> = [];
  for (let i = 0; i < 9; i++) {
    const name = `park-${i}`;
    parked.push({ name, id: await env.start(name, PARKING, { enqueue: true }) });
  }
  for (const { name, id } of parked) await waitForStatus(name, id, RunStatus.waiting);

  // The queue has 8 slots and 9 runs wait for a person: a one-step run still goes through at once.
  const quick = await env.start('quick', ONE_STEP, { enqueue: true });
  const done = await env.waitForEnd('quick', quick, 10_000);
  expect(done.status).toBe(RunStatus.succeeded);

  // A second run of a parked DAG (max_active_runs 1) waits: the parked run is active.
  const first = parked[0] ?? { name: '', id: '' };
  const second = await env.start(first.name, PARKING, { enqueue: true });
  await new Promise((resolve) => setTimeout(resolve, 4 * env.config.queuePollMs));
  expect((await env.detail(first.name, second)).status).toBe(RunStatus.queued);

  // Deciding the parked run resumes it at once (no queue), then its DAG's next run is admitted.
  const ref = await completeHumanTask(
    env.deps,
    { dagName: first.name, dagRunId: first.id, stepName: 'review', values: {} },
    testContext(),
  );
  expect(ref.status).toBe(RunStatus.running);
  expect((await env.waitForEnd(first.name, first.id)).status).toBe(RunStatus.succeeded);
  await waitForStatus(first.name, second, RunStatus.waiting);
}, 90_000);
