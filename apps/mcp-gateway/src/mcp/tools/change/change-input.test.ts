import { DaguError } from '@dagu-mcp/contracts';
import { parseChangeInput, type ChangeErrorContext } from './change-input';

const SPEC = 'steps:\n  - name: hello\n    run: echo hello\n';

function failure(args: unknown): { error: DaguError; context: ChangeErrorContext } {
  const context: ChangeErrorContext = {};
  try {
    parseChangeInput(args, context);
  } catch (err) {
    if (err instanceof DaguError) return { error: err, context };
    throw err;
  }
  throw new Error('expected a failure');
}

describe('parseChangeInput (022 §Input)', () => {
  test('defaults mode=preview and type=upsert_dag; trims name; keeps spec as given', () => {
    const request = parseChangeInput({ name: '  nightly ', spec: `  ${SPEC}`, mode: null }, {});
    expect(request).toEqual({
      mode: 'preview',
      type: 'upsert_dag',
      name: 'nightly',
      spec: `  ${SPEC}`,
      dagUri: 'dagu://dags/nightly/spec',
    });
  });

  test.each([
    [[SPEC], 'invalid_tool_input', undefined],
    [{ name: 'a', spec: SPEC, force: true }, 'invalid_tool_input', 'force'],
    [{ name: 'a', spec: SPEC, zeta: 1, alpha: 2 }, 'invalid_tool_input', 'alpha'],
    [{ name: 7, spec: SPEC }, 'invalid_tool_input', 'name'],
    [{ name: 'a', spec: { steps: [] } }, 'invalid_tool_input', 'spec'],
    [{ name: '   ', spec: SPEC }, 'invalid_tool_input', 'name'],
    [{ name: 'a', spec: ' \n\t ' }, 'invalid_tool_input', 'spec'],
    [{ name: 'a' }, 'invalid_tool_input', 'spec'],
    [{ name: 'bad name', spec: SPEC }, 'invalid_tool_input', 'name'],
    [{ name: 'a', spec: SPEC, mode: 'write' }, 'unsupported_change_mode', 'mode'],
    [{ name: 'a', spec: SPEC, mode: 'Apply' }, 'unsupported_change_mode', 'mode'],
    [{ name: 'a', spec: SPEC, type: 'delete_dag' }, 'unsupported_change_type', 'type'],
  ])('%j → %s on %s', (args, code, field) => {
    const { error } = failure(args);
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
  });

  test('the error context carries what was resolved (022 §Errors optional fields)', () => {
    expect(failure({ name: 'a', spec: SPEC, mode: 'write' }).context).toEqual({ mode: 'write' });
    expect(failure({ name: 'nightly', spec: '' }).context).toEqual({
      mode: 'preview',
      type: 'upsert_dag',
      dagName: 'nightly',
      dagUri: 'dagu://dags/nightly/spec',
    });
  });
});
