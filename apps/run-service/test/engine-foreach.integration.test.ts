import { readForeachItem, readForeachItems } from '../src/foreach/foreach-read';
import { readStepLog } from '../src/runs/run-logs';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Foreach against the real PostgreSQL (dagu-model §1 buckets and order, §3
 * foreach; 021 foreach_items / foreach_item, step_log with item +
 * bodyStepName): per-item step states and logs, a failing item, nesting.
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
`;

describe('foreach', () => {
  it('runs the body per item; a failing item fails the step; items list failed first with counts', async () => {
    const id = await env.start('loop', LOOP);
    const run = await env.waitForEnd('loop', id);
    expect(run.status).toBe(2);
    expect(stepOf(run, 'loop')).toMatchObject({ status: 2, error: '1 of 3 foreach items failed', foreachUri: `dagu://runs/loop/${id}/steps/loop/foreach` });
    const list = await readForeachItems(env.pool, { dagName: 'loop', dagRunId: id, stepName: 'loop' });
    expect(list).toMatchObject({ total: 3, counts: { notStarted: 0, running: 0, succeeded: 2, failed: 1, aborted: 0 } });
    expect(list.items.map((i) => [i.item, i.key, i.status])).toEqual([['1', 'bad', 2], ['0', 'a', 4], ['2', 'c', 4]]);
    const failedOnly = await readForeachItems(env.pool, { dagName: 'loop', dagRunId: id, stepName: 'loop', query: { status: 'succeeded', perPage: 1, page: 2 } });
    expect(failedOnly.items.map((i) => i.key)).toEqual(['c']);
    const item = await readForeachItem(env.pool, { dagName: 'loop', dagRunId: id, stepName: 'loop', item: '1' });
    expect(item).toMatchObject({ item: '1', key: 'bad', status: 2, error: expect.stringContaining('step check failed') });
    expect(item.steps.map((s) => [s.name, s.status, s.hasStdout])).toEqual([['say', 4, true], ['check', 2, false]]);
    const log = await readStepLog(env.pool, { dagName: 'loop', dagRunId: id, stepName: 'loop', item: '2', bodyStepName: 'say' });
    expect(log.stdoutContent).toBe('item c n=2');
  });

  it('nested foreach: inner items are listed with parent and addressed as <foreachParent>.<index>', async () => {
    const id = await env.start('nested-loop', `steps:
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
`);
    const run = await env.waitForEnd('nested-loop', id);
    expect(run.status).toBe(4);
    const outerItem = await readForeachItem(env.pool, { dagName: 'nested-loop', dagRunId: id, stepName: 'outer', item: '1' });
    const parent = outerItem.steps[0]?.foreachParent;
    expect(parent).toBe('1.inner');
    const inner = await readForeachItems(env.pool, { dagName: 'nested-loop', dagRunId: id, stepName: 'outer', query: { parent: parent ?? '' } });
    expect(inner).toMatchObject({ total: 3, counts: { succeeded: 3 } });
    expect(inner.items.map((i) => i.item)).toEqual(['1.inner.0', '1.inner.1', '1.inner.2']);
    const log = await readStepLog(env.pool, { dagName: 'nested-loop', dagRunId: id, stepName: 'outer', item: '1.inner.2', bodyStepName: 'pair' });
    expect(log.stdoutContent).toBe('3');
  });
});
