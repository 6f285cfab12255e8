import { readFile } from 'node:fs/promises';
import { readForeachItem, readForeachItems } from '../src/read/foreach-read';
import { readStepLog } from '../src/read/run-logs';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';
import { daguExample } from '../../../packages/dag-spec/test-fixtures/dagu-examples';

/**
 * Foreach against the real PostgreSQL (dagu-model §1 buckets and order, §3
 * foreach; 021 foreach_items / foreach_item, step_log with item +
 * bodyStepName): per-item step states and logs, a failing item, nesting,
 * `collect` and the step's aggregate output.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('foreach');
});
afterAll(async () => {
  await env.close();
});

const LOOP = `steps:
  - id: list
    run: echo '["a","bad","c"]'
    output: ITEMS
  - id: loop
    depends: [list]
    foreach:
      items: \${ITEMS}
      as: name
      max_concurrent: 2
      steps:
        - id: say
          run: echo "item \${foreach.name} n=\${foreach.index}"
        - id: check
          depends: [say]
          run: test "\${foreach.name}" != bad
  - id: after
    depends: [loop]
    run: echo after-loop
`;

describe('foreach', () => {
  it('runs the body per item; one failing item of three makes the step and the run partially succeeded, the next step runs; items list failed first with counts', async () => {
    const id = await env.start('loop', LOOP);
    const run = await env.waitForEnd('loop', id);
    // dagu-model §3 "Run outcome": some items failed, at least one succeeded → 6; dependants run.
    expect(run).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    expect(stepOf(run, 'after').status).toBe(4);
    expect(stepOf(run, 'loop')).toMatchObject({
      status: 6,
      statusLabel: 'partially_succeeded',
      error: '1 of 3 foreach items failed',
      foreachUri: `dagu://runs/loop/${id}/steps/loop/foreach`,
    });
    const list = await readForeachItems(env.pool, { dagName: 'loop', dagRunId: id, stepName: 'loop' });
    expect(list).toMatchObject({
      total: 3,
      counts: { notStarted: 0, running: 0, succeeded: 2, failed: 1, aborted: 0 },
    });
    expect(list.items.map((i) => [i.item, i.key, i.status])).toEqual([
      ['1', 'bad', 2],
      ['0', 'a', 4],
      ['2', 'c', 4],
    ]);
    const failedOnly = await readForeachItems(env.pool, {
      dagName: 'loop',
      dagRunId: id,
      stepName: 'loop',
      query: { status: 'succeeded', perPage: 1, page: 2 },
    });
    expect(failedOnly.items.map((i) => i.key)).toEqual(['c']);
    const item = await readForeachItem(env.pool, { dagName: 'loop', dagRunId: id, stepName: 'loop', item: '1' });
    expect(item).toMatchObject({
      item: '1',
      key: 'bad',
      status: 2,
      error: expect.stringContaining('step check failed'),
    });
    expect(item.steps.map((s) => [s.name, s.status, s.hasStdout])).toEqual([
      ['say', 4, true],
      ['check', 2, false],
    ]);
    const log = await readStepLog(env.pool, {
      dagName: 'loop',
      dagRunId: id,
      stepName: 'loop',
      item: '2',
      bodyStepName: 'say',
    });
    expect(log.stdoutContent).toBe('item c n=2');
  });

  it('nested foreach: inner items are listed with parent and addressed as <foreachParent>.<index>', async () => {
    const id = await env.start(
      'nested-loop',
      `steps:
  - id: outer
    foreach:
      items: [x, y]
      as: o
      steps:
        - id: inner
          foreach:
            items: [1, 2, 3]
            as: i
            steps:
              - id: pair
                run: echo "\${foreach.i}"
`,
    );
    const run = await env.waitForEnd('nested-loop', id);
    expect(run.status).toBe(4);
    const outerItem = await readForeachItem(env.pool, {
      dagName: 'nested-loop',
      dagRunId: id,
      stepName: 'outer',
      item: '1',
    });
    const parent = outerItem.steps[0]?.foreachParent;
    expect(parent).toBe('1.inner');
    const inner = await readForeachItems(env.pool, {
      dagName: 'nested-loop',
      dagRunId: id,
      stepName: 'outer',
      query: { parent: parent ?? '' },
    });
    expect(inner).toMatchObject({ total: 3, counts: { succeeded: 3 } });
    expect(inner.items.map((i) => i.item)).toEqual(['1.inner.0', '1.inner.1', '1.inner.2']);
    const log = await readStepLog(env.pool, {
      dagName: 'nested-loop',
      dagRunId: id,
      stepName: 'outer',
      item: '1.inner.2',
      bodyStepName: 'pair',
    });
    expect(log.stdoutContent).toBe('3');
  });
});

const COLLECT = `steps:
  - id: summarize
    foreach:
      items: [alpha, beta, gamma]
      as: episode
      key: k-\${foreach.episode}
      max_concurrent: 2
      steps:
        - id: write
          run: echo \${foreach.episode}
        - id: count
          depends: [write]
          run: echo "N=\${foreach.index}" >> "$DAGU_OUTPUT_FILE"
          outputs: [N]
      collect:
        value: \${steps.write.stdout}
        n: \${steps.count.outputs.N}
        key: \${foreach.key}
    output: SUMMARY
  - id: use
    depends: [summarize]
    run: echo '\${steps.summarize.outputs.value} total=\${SUMMARY.summary.total} first=\${SUMMARY.outputs[0].value}'
`;

describe('foreach collect', () => {
  it('the real schema-foreach-collect.yaml: each item collects its body step stdout', async () => {
    const spec = await readFile(daguExample('schema-foreach-collect.yaml'), 'utf8');
    const id = await env.start('collect-example', spec);
    const run = await env.waitForEnd('collect-example', id);
    expect(run.status).toBe(4);
    const list = await readForeachItems(env.pool, { dagName: 'collect-example', dagRunId: id, stepName: 'summarize' });
    expect(list.items.map((i) => [i.key, i.collected])).toEqual([
      ['alpha', { value: 'alpha' }],
      ['beta', { value: 'beta' }],
    ]);
    const log = await readStepLog(env.pool, { dagName: 'collect-example', dagRunId: id, stepName: 'summarize' });
    expect(JSON.parse(log.stdoutContent)).toEqual({
      summary: { total: 2, succeeded: 2, failed: 0 },
      items: [
        { index: 0, key: 'alpha', status: 'succeeded', outputs: { value: 'alpha' } },
        { index: 1, key: 'beta', status: 'succeeded', outputs: { value: 'beta' } },
      ],
      outputs: [{ value: 'alpha' }, { value: 'beta' }],
    });
    expect(stepOf(run, 'summarize').outputs).toEqual({ value: '["alpha","beta"]' });
  });

  it('collect values reach later steps as outputs and through output:, in item order; items show them', async () => {
    const id = await env.start('collect', COLLECT);
    const run = await env.waitForEnd('collect', id);
    expect(run.status).toBe(4);
    const use = await readStepLog(env.pool, { dagName: 'collect', dagRunId: id, stepName: 'use' });
    expect(use.stdoutContent).toBe('["alpha","beta","gamma"] total=3 first=alpha');
    expect(stepOf(run, 'summarize').outputs).toMatchObject({
      value: '["alpha","beta","gamma"]',
      n: '["0","1","2"]',
      key: '["k-alpha","k-beta","k-gamma"]',
    });
    const item = await readForeachItem(env.pool, {
      dagName: 'collect',
      dagRunId: id,
      stepName: 'summarize',
      item: '2',
    });
    expect(item).toMatchObject({ key: 'k-gamma', status: 4, collected: { value: 'gamma', n: '2', key: 'k-gamma' } });
  });

  it('an unresolved collect reference fails its item; the aggregate reports it', async () => {
    const id = await env.start(
      'collect-missing',
      `steps:
  - id: loop
    foreach:
      items: [a]
      steps:
        - id: w
          run: echo hi
      collect:
        v: \${steps.nope.outputs.V}
`,
    );
    const run = await env.waitForEnd('collect-missing', id);
    expect(stepOf(run, 'loop')).toMatchObject({ status: 2, error: '1 of 1 foreach items failed' });
    const item = await readForeachItem(env.pool, {
      dagName: 'collect-missing',
      dagRunId: id,
      stepName: 'loop',
      item: '0',
    });
    expect(item).toMatchObject({ status: 2, error: 'collect v: unresolved ${steps.nope.outputs.V}' });
    expect(item.steps.map((s) => s.status)).toEqual([4]);
    const log = await readStepLog(env.pool, { dagName: 'collect-missing', dagRunId: id, stepName: 'loop' });
    expect(JSON.parse(log.stdoutContent)).toMatchObject({
      summary: { total: 1, succeeded: 0, failed: 1 },
      items: [{ index: 0, status: 'failed', error: 'collect v: unresolved ${steps.nope.outputs.V}' }],
      outputs: [],
    });
  });
});
