import { DaguError } from '@dagu-mcp/contracts';
import { validateDagChange, workspaceOfLabels } from './dag-validation';

/** Spec 022 `upsert_dag` validation and the stored columns; dagu-model §10 workspace label. */
describe('validateDagChange', () => {
  it('keeps the spec byte for byte and derives the stored columns of a valid DAG', () => {
    const spec =
      '  \n# leading comment\ndescription: Nightly\nlabels: [team=data, workspace=ops]\nschedule: "0 1 * * *"\nsteps:\n  - run: echo hi\n\n';
    const { validation, write } = validateDagChange('nightly', spec);
    expect(validation).toMatchObject({ valid: true, errors: [], dag: { name: 'nightly', description: 'Nightly' } });
    expect(write).toEqual({
      name: 'nightly',
      spec,
      normalized: validation.dag,
      labels: ['team=data', 'workspace=ops'],
      workspace: 'ops',
      schedule: ['0 1 * * *'],
      description: 'Nightly',
    });
  });

  it('reports errors and nothing to write for an invalid DAG', () => {
    const { validation, write } = validateDagChange('broken', 'steps:\n  - name: [\n');
    expect(validation.valid).toBe(false);
    expect(validation.errors.length).toBeGreaterThan(0);
    expect(validation.dag).toBeUndefined();
    expect(write).toBeUndefined();
  });

  it.each(['bad name', '.', '..', 'x'.repeat(41), 'é'])(
    'refuses the DAG name %j as invalid_tool_input on name',
    (name) => {
      let caught: unknown;
      try {
        validateDagChange(name, 'steps:\n  - run: echo hi\n');
      } catch (error: unknown) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(DaguError);
      expect(caught).toMatchObject({ code: 'invalid_tool_input', field: 'name' });
    },
  );
});

describe('workspaceOfLabels', () => {
  it.each([
    [['workspace=ops'], 'ops'],
    [['team=a', 'workspace= data ', 'workspace=ops'], 'data'],
    [['workspace=', 'workspace=ops'], 'ops'],
    [['workspace', 'workspaces=ops'], undefined],
    [[], undefined],
  ])('%j → %j', (labels, expected) => {
    expect(workspaceOfLabels(labels)).toBe(expected);
  });
});
