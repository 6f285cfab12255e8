import { decideApproval } from '../src/runs/checkpoint-resume';
import { getRunDetail } from '../src/read/run-detail';
import { stopRun } from '../src/runs/run-stop';
import { readStepLog } from '../src/read/run-logs';
import { listRuns } from '../src/read/run-list';
import { createRunTestEnv, stepOf, testContext, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Composition against the real PostgreSQL (dagu-model §3 dag.run, §5
 * subRuns, 021 run with subRunId): local sub-DAGs of the YAML stream run as
 * child runs addressed under their root; the parent step takes the child's
 * outcome and its outputs; a checkpoint deep in a child makes every
 * ancestor wait (7) until it is decided; every child-run event names its root.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('composition');
});
afterAll(async () => {
  await env.close();
});

const NESTED = `type: graph
steps:
  - id: prepare
    run: echo prepare
  - id: run_child
    action: dag.run
    with:
      dag: child-workflow
      params:
        task_id: "123"
    output: CHILD
    depends: [prepare]
  - id: done
    run: echo "child said \${CHILD.outputs.GREETING}"
    depends: [run_child]
---
name: child-workflow
params:
  - name: task_id
    default: "000"
steps:
  - id: child_start
    run: echo "GREETING=hello-\${task_id}" >> "$DAGU_OUTPUT_FILE"
    outputs: [GREETING]
  - id: grand
    action: dag.run
    with: {dag: grandchild}
    depends: [child_start]
---
name: grandchild
steps:
  - run: echo grand
`;

describe('dag.run of local sub-DAGs', () => {
  it('runs the child and grandchild as child runs under the root; the parent step takes the outcome and outputs', async () => {
    const id = await env.start('nested', NESTED);
    const run = await env.waitForEnd('nested', id);
    expect(run.status).toBe(4);
    const call = stepOf(run, 'run_child');
    const subRuns = call.subRuns as Array<{ dagRunId: string; uri: string; dagName: string }>;
    expect(subRuns).toHaveLength(1);
    const child = subRuns[0];
    if (child === undefined) throw new Error('no sub run');
    expect(child).toMatchObject({ dagName: 'child-workflow', uri: `dagu://runs/nested/${id}/sub/${child.dagRunId}` });
    const done = await readStepLog(env.pool, { dagName: 'nested', dagRunId: id, stepName: 'done' });
    expect(done.stdoutContent).toBe('child said hello-123');
    const childDetail = await getRunDetail(env.pool, { dagName: 'nested', dagRunId: id, subRunId: child.dagRunId });
    expect(childDetail).toMatchObject({
      name: 'child-workflow',
      status: 4,
      uri: child.uri,
      rootRun: { name: 'nested', dagRunId: id },
      parentRun: { name: 'nested', dagRunId: id },
    });
    expect(stepOf(childDetail, 'child_start').logUri).toBe(`${child.uri}/steps/child_start/logs`);
    const grand = (stepOf(childDetail, 'grand').subRuns as Array<{ dagRunId: string; uri: string }>)[0];
    expect(grand?.uri).toBe(`dagu://runs/nested/${id}/sub/${grand?.dagRunId ?? ''}`);
    const grandId = grand?.dagRunId ?? '';
    const grandDetail = await getRunDetail(env.pool, { dagName: 'nested', dagRunId: id, subRunId: grandId });
    const grandLog = await readStepLog(env.pool, {
      dagName: 'nested',
      dagRunId: id,
      subRunId: grandId,
      stepName: grandDetail.steps[0]?.name ?? '',
    });
    expect(grandLog.stdoutContent).toBe('grand');
    const listed = await listRuns(env.pool, {});
    expect(listed.items.map((item) => item.name)).not.toContain('child-workflow');
  });

  it('a failing child fails the parent step; an unknown sub-DAG fails it with the reason', async () => {
    const id = await env.start(
      'failing',
      'steps:\n  - name: call\n    action: dag.run\n    with: {dag: bad}\n---\nname: bad\nsteps:\n  - run: exit 3\n',
    );
    const run = await env.waitForEnd('failing', id);
    expect(run.status).toBe(2);
    expect(stepOf(run, 'call').error).toMatch(/^sub-DAG run bad\/.+ ended failed$/);
    const missing = await env.start(
      'missing',
      'steps:\n  - name: call\n    action: dag.run\n    with: {dag: nowhere}\n',
    );
    const ended = await env.waitForEnd('missing', missing);
    expect(stepOf(ended, 'call').error).toContain('sub-DAG nowhere not found');
  });

  it('a child that ends partially_succeeded makes the step and the parent partially_succeeded; dependants run (dagu-model §3 "Run outcome")', async () => {
    const id = await env.start(
      'partial-parent',
      `steps:
  - name: call
    action: dag.run
    with: {dag: worker}
  - {name: after, run: echo after, depends: [call]}
---
name: worker
steps:
  - {name: bad, run: exit 1, continue_on: {failure: true}}
  - {name: good, run: exit 0}
`,
    );
    const run = await env.waitForEnd('partial-parent', id);
    expect(run).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    expect(stepOf(run, 'call')).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    expect(stepOf(run, 'after').status).toBe(4);
    const child = (stepOf(run, 'call').subRuns as Array<{ dagRunId: string; dagName: string }>)[0];
    expect(child?.dagName).toBe('worker');
    const worker = await getRunDetail(env.pool, {
      dagName: 'partial-parent',
      dagRunId: id,
      subRunId: child?.dagRunId ?? '',
    });
    expect(worker.statusLabel).toBe('partially_succeeded');
  });
});

const WAITING_CHILD = `steps:
  - id: call
    action: dag.run
    with: {dag: review}
  - id: after
    depends: [call]
    run: echo after
---
name: review
steps:
  - id: nested
    action: dag.run
    with: {dag: gatekeeper}
---
name: gatekeeper
steps:
  - name: gate
    run: echo gate
    approval: {prompt: ok?}
`;

async function waitForStatus(name: string, id: string, status: number): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await env.detail(name, id)).status !== status) {
    if (Date.now() > until) throw new Error(`run ${id} never reached ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a checkpoint inside a child run', () => {
  it('makes the parent and the root wait (7); approved, the child resumes and the root goes on to succeed', async () => {
    const id = await env.start('waits', WAITING_CHILD);
    await waitForStatus('waits', id, 7);
    const kids = await env.pool.query(
      "SELECT dag_name, dag_run_id, status FROM runs WHERE root_pk IS NOT NULL AND dag_name IN ('review', 'gatekeeper') ORDER BY pk",
    );
    const rows = kids.rows as Array<{ dag_name: string; dag_run_id: string; status: number }>;
    expect(rows.map((row) => [row.dag_name, row.status])).toEqual([
      ['review', 7],
      ['gatekeeper', 7],
    ]);
    // dagu-model §3 "Run outcome": a child parked at a checkpoint makes the dag.run step waiting too
    // (the step's write may trail the run's status by a moment).
    let root = await env.detail('waits', id);
    for (const until = Date.now() + 5000; stepOf(root, 'call').status !== 7 && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      root = await env.detail('waits', id);
    }
    expect(stepOf(root, 'call')).toMatchObject({ status: 7, statusLabel: 'waiting' });
    expect(stepOf(root, 'after').status).toBe(0);
    const gatekeeper = rows[1]?.dag_run_id ?? '';
    await decideApproval(
      env.deps,
      { dagName: 'gatekeeper', dagRunId: gatekeeper, stepName: 'gate', decision: 'approve' },
      testContext(),
    );
    const done = await env.waitForEnd('waits', id);
    expect(done.status).toBe(4);
    expect(stepOf(done, 'call').status).toBe(4);
    expect(stepOf(done, 'after').status).toBe(4);
    expect(env.publisher.events.filter((e) => e.dagRunId === id).map((e) => e.status)).toEqual([1, 7, 1, 4]);
    const childEvents = env.publisher.events.filter((e) => e.name === 'review' || e.name === 'gatekeeper');
    expect(childEvents.filter((e) => e.name === 'gatekeeper').map((e) => e.status)).toEqual([1, 7, 1, 4]);
    expect(childEvents.filter((e) => e.name === 'review').map((e) => e.status)).toEqual([1, 7, 1, 4]);
    for (const event of childEvents) expect(event.root).toEqual({ name: 'waits', dagRunId: id });
    expect(env.publisher.events.filter((e) => e.dagRunId === id).every((e) => e.root === undefined)).toBe(true);
  });

  it('stopping the waiting root stops the waiting children', async () => {
    const id = await env.start('waits-stop', WAITING_CHILD);
    await waitForStatus('waits-stop', id, 7);
    const ref = await stopRun(env.deps, { dagName: 'waits-stop', dagRunId: id }, testContext());
    expect(ref).toMatchObject({ status: 3 });
    const done = await env.waitForEnd('waits-stop', id);
    expect(done.status).toBe(3);
    const kids = await env.pool.query(
      'SELECT status FROM runs WHERE root_pk = (SELECT pk FROM runs WHERE dag_run_id = $1) ORDER BY pk',
      [id],
    );
    expect(kids.rows.map((row: { status: number }) => row.status)).toEqual([3, 3]);
  });
});
