import { getRunDetail } from '../src/runs/run-detail';
import { readStepLog } from '../src/runs/run-logs';
import { listRuns } from '../src/runs/run-list';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Composition against the real PostgreSQL (dagu-model §3 dag.run, §5
 * subRuns, 021 run with subRunId): local sub-DAGs of the YAML stream run as
 * child runs addressed under their root; the parent step takes the child's
 * outcome and its outputs.
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
    expect(childDetail).toMatchObject({ name: 'child-workflow', status: 4, uri: child.uri, rootRun: { name: 'nested', dagRunId: id }, parentRun: { name: 'nested', dagRunId: id } });
    expect(stepOf(childDetail, 'child_start').logUri).toBe(`${child.uri}/steps/child_start/logs`);
    const grand = (stepOf(childDetail, 'grand').subRuns as Array<{ dagRunId: string; uri: string }>)[0];
    expect(grand?.uri).toBe(`dagu://runs/nested/${id}/sub/${grand?.dagRunId ?? ''}`);
    const grandId = grand?.dagRunId ?? '';
    const grandDetail = await getRunDetail(env.pool, { dagName: 'nested', dagRunId: id, subRunId: grandId });
    const grandLog = await readStepLog(env.pool, { dagName: 'nested', dagRunId: id, subRunId: grandId, stepName: grandDetail.steps[0]?.name ?? '' });
    expect(grandLog.stdoutContent).toBe('grand');
    const listed = await listRuns(env.pool, {});
    expect(listed.items.map((item) => item.name)).not.toContain('child-workflow');
  });

  it('a failing child fails the parent step; an unknown sub-DAG fails it with the reason', async () => {
    const id = await env.start('failing', 'steps:\n  - name: call\n    action: dag.run\n    with: {dag: bad}\n---\nname: bad\nsteps:\n  - run: exit 3\n');
    const run = await env.waitForEnd('failing', id);
    expect(run.status).toBe(2);
    expect(stepOf(run, 'call').error).toMatch(/^sub-DAG run bad\/.+ ended failed$/);
    const missing = await env.start('missing', 'steps:\n  - name: call\n    action: dag.run\n    with: {dag: nowhere}\n');
    const ended = await env.waitForEnd('missing', missing);
    expect(stepOf(ended, 'call').error).toContain('sub-DAG nowhere not found');
  });
});
