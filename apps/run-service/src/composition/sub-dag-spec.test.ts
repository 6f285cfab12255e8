import { readFile } from 'node:fs/promises';
import { localSubDagStream, resolveChildSpec, yamlDocuments } from './sub-dag-spec';
import { daguExample } from '../../../../packages/dag-spec/test-fixtures/dagu-examples';

const STREAM = `steps:
  - id: call
    action: dag.run
    with: {dag: child}
---
name: child
steps:
  - id: c1
    action: dag.run
    with: {dag: grandchild}
---
# comment
name: "grandchild"
steps:
  - run: echo gc
`;

describe('sub-DAG specs (dagu-model §3 dag.run)', () => {
  test('splits documents and builds a local child stream with its siblings', () => {
    expect(yamlDocuments(STREAM)).toHaveLength(3);
    const child = localSubDagStream(STREAM, 'child');
    expect(child?.startsWith('name: child')).toBe(true);
    expect(child).toContain('name: "grandchild"');
    expect(child).not.toContain('with: {dag: child}');
    expect(localSubDagStream(STREAM, 'nope')).toBeUndefined();
  });

  test('resolves local first, then stored; errors name the DAG', async () => {
    const local = await resolveChildSpec(STREAM, 'grandchild', async () => 'steps:\n  - run: echo stored\n');
    expect(local).toMatchObject({ source: 'local', dag: { name: 'grandchild' } });
    const stored = await resolveChildSpec(STREAM, 'other', async (name) =>
      name === 'other' ? 'steps:\n  - run: echo stored\n' : undefined,
    );
    expect(stored).toMatchObject({ source: 'stored', dag: { name: 'other' } });
    expect(await resolveChildSpec(STREAM, 'missing', async () => undefined)).toEqual({
      error: expect.stringContaining('sub-DAG missing not found'),
    });
  });

  test('the nested-workflows example resolves its child', async () => {
    // dag-spec's copy of the Dagu examples; a missing file fails the test rather than skipping it.
    const spec = await readFile(daguExample('ex04-nested-workflows.yaml'), 'utf8');
    expect(await resolveChildSpec(spec, 'child-workflow', undefined)).toMatchObject({
      source: 'local',
      dag: { name: 'child-workflow' },
    });
  });
});
