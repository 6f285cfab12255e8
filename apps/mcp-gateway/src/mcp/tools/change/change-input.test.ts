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
    [{ name: 'a', spec: SPEC, type: 'drop_dag' }, 'unsupported_change_type', 'type'],
    [{ name: 'a', spec: SPEC, type: 'Delete_dag' }, 'unsupported_change_type', 'type'],
    // 022b: a field the type does not list, then the type's required fields in table order.
    [{ name: 'a', spec: SPEC, type: 'delete_dag' }, 'invalid_tool_input', 'spec'],
    [{ type: 'rename_dag', name: 'a' }, 'invalid_tool_input', 'newName'],
    [{ type: 'rename_dag', name: 'a', newName: 'a' }, 'invalid_tool_input', 'newName'],
    [{ type: 'rename_dag', name: 'a', newName: 'b c' }, 'invalid_tool_input', 'newName'],
    [{ type: 'rename_dag', newName: 'b' }, 'invalid_tool_input', 'name'],
    [{ type: 'set_dag_profile', name: 'a' }, 'invalid_tool_input', 'profile'],
    [{ type: 'set_dag_profile', name: 'a', profile: 'Prod' }, 'invalid_tool_input', 'profile'],
    [{ type: 'clear_dag_profile', name: 'a', profile: 'prod' }, 'invalid_tool_input', 'profile'],
    [{ type: 'upsert_wiki_page', workspace: 'ops', path: 'a' }, 'invalid_tool_input', 'content'],
    [{ type: 'upsert_wiki_page', workspace: 'all', path: 'a', content: '# A' }, 'invalid_tool_input', 'workspace'],
    [{ type: 'upsert_wiki_page', workspace: 'ops', path: 'a.md/../b', content: '# A' }, 'invalid_tool_input', 'path'],
    [
      { type: 'upsert_wiki_page', name: 'x', workspace: 'ops', path: 'a', content: '# A' },
      'invalid_tool_input',
      'name',
    ],
    [{ type: 'rename_wiki_page', workspace: 'ops', path: 'a' }, 'invalid_tool_input', 'newPath'],
    [{ type: 'rename_wiki_page', workspace: 'ops', path: 'a', newPath: 'a' }, 'invalid_tool_input', 'newPath'],
    [{ type: 'delete_wiki_page', workspace: 'ops' }, 'invalid_tool_input', 'path'],
    [{ type: 'delete_wiki_page', workspace: 'ops', path: 'a', content: 'x' }, 'invalid_tool_input', 'content'],
  ])('%j → %s on %s', (args, code, field) => {
    const { error } = failure(args);
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
  });

  test('every error echoes mode, type and a valid name (dagu-model §10), without changing which error wins', () => {
    const echo = { dagName: 'a', dagUri: 'dagu://dags/a/spec' };
    const mode = failure({ name: 'a', spec: SPEC, mode: 'write', type: 'rename_dag' });
    expect(mode.error.code).toBe('unsupported_change_mode');
    expect(mode.context).toEqual({ mode: 'write', type: 'rename_dag', ...echo });
    const type = failure({ name: ' a ', spec: SPEC, type: 'drop_dag' });
    expect(type.error.code).toBe('unsupported_change_type');
    expect(type.context).toEqual({ mode: 'preview', type: 'drop_dag', ...echo });
    const unknown = failure({ name: 'a', spec: SPEC, mode: 'apply', force: true });
    expect(unknown.error.field).toBe('force');
    expect(unknown.context).toEqual({ mode: 'apply', type: 'upsert_dag', ...echo });
    // A bad name is not echoed; a mistyped mode is not echoed either (its own error names it).
    expect(failure({ name: 'bad name', spec: SPEC, mode: 'write' }).context).toEqual({
      mode: 'write',
      type: 'upsert_dag',
    });
    const typed = failure({ name: 'a', spec: SPEC, mode: 3 });
    expect(typed.error.field).toBe('mode');
    expect(typed.context).toEqual({ type: 'upsert_dag', ...echo });
  });

  test('every type parses to its own fields with their URIs (022b §Input)', () => {
    expect(parseChangeInput({ type: 'rename_dag', name: ' a ', newName: 'b', mode: 'apply' }, {})).toEqual({
      mode: 'apply',
      type: 'rename_dag',
      name: 'a',
      dagUri: 'dagu://dags/a/spec',
      newName: 'b',
      newDagUri: 'dagu://dags/b/spec',
    });
    expect(parseChangeInput({ type: 'set_dag_profile', name: 'a', profile: 'prod-1' }, {})).toMatchObject({
      profile: 'prod-1',
    });
    expect(
      parseChangeInput({ type: 'rename_wiki_page', workspace: 'ops', path: 'guides/a', newPath: 'guides/b' }, {}),
    ).toEqual({
      mode: 'preview',
      type: 'rename_wiki_page',
      workspace: 'ops',
      path: 'guides/a',
      pageUri: 'dagu://wiki/ops/guides%2Fa',
      newPath: 'guides/b',
      newPageUri: 'dagu://wiki/ops/guides%2Fb',
    });
    expect(
      parseChangeInput({ type: 'upsert_wiki_page', workspace: 'ops', path: 'a', content: ' # A\n' }, {}),
    ).toMatchObject({
      content: ' # A\n',
    });
  });

  test('wiki-type errors echo workspace, path and pageUri (022b §Profiles: wire details)', () => {
    const { context } = failure({ type: 'rename_wiki_page', workspace: 'ops', path: 'a/b', newPath: 'a/b' });
    expect(context).toEqual({
      mode: 'preview',
      type: 'rename_wiki_page',
      workspace: 'ops',
      path: 'a/b',
      pageUri: 'dagu://wiki/ops/a%2Fb',
    });
  });

  test('the error context carries what was resolved (022 §Errors optional fields)', () => {
    expect(failure({ name: 'nightly', spec: '' }).context).toEqual({
      mode: 'preview',
      type: 'upsert_dag',
      dagName: 'nightly',
      dagUri: 'dagu://dags/nightly/spec',
    });
  });
});
