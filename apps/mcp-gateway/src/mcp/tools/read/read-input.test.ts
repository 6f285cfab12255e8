import { DaguError } from '@dagu-mcp/contracts';
import { parseReadInput, type ReadErrorContext } from './read-input';
import { readSuccess } from './read-tool';

function failure(args: unknown): { error: DaguError; context: ReadErrorContext } {
  const context: ReadErrorContext = {};
  try {
    parseReadInput(args, context);
  } catch (err) {
    if (err instanceof DaguError) return { error: err, context };
    throw err;
  }
  throw new Error('expected a failure');
}

describe('parseReadInput: URI mode target derivation (021 §Addressing modes)', () => {
  test.each([
    ['dagu://reference', 'references'],
    ['dagu://reference/tools', 'reference'],
    ['dagu://dags?perPage=5', 'dags'],
    ['dagu://dags/nightly/spec', 'dag_spec'],
    ['dagu://wiki', 'wiki'],
    ['dagu://wiki/team', 'wiki'],
    ['dagu://wiki/team/runbooks%2Fdeploy', 'wiki_page'],
    ['dagu://runs', 'runs'],
    ['dagu://runs/n/r1', 'run'],
    ['dagu://runs/n/r1/logs?tail=5', 'run_logs'],
    ['dagu://runs/n/r1/steps/s1/logs', 'step_log'],
    ['dagu://runs/n/r1/sub/c1', 'run'],
    ['dagu://runs/n/r1/sub/c1/steps/s1/logs', 'step_log'],
    ['dagu://runs/n/r1/steps/s1/foreach', 'foreach_items'],
    ['dagu://runs/n/r1/steps/s1/foreach/3', 'foreach_item'],
    ['dagu://runs/n/r1/steps/s1/foreach/3/steps/b/logs', 'step_log'],
    ['dagu://runs/n/r1/sub/c1/steps/s1/foreach/3', 'foreach_item'],
  ])('%s → %s, uri echoed as given', (uri, target) => {
    const request = parseReadInput({ uri: `  ${uri} ` }, {});
    expect(request.target).toBe(target);
    expect(request.uri).toBe(uri);
  });

  test.each([
    ['dagu://dags/nightly%2Dreport/spec', 'dagu://dags/nightly-report/spec'],
    ['DAGU://dags?', 'dagu://dags'],
    ['dagu://wiki?flat=true&page=2', 'dagu://wiki?flat=true&page=2'],
  ])('URI mode returns %s with a canonical path as %s (021: returned URIs follow 020 escaping)', (given, returned) => {
    expect(parseReadInput({ uri: given }, {}).uri).toBe(returned);
  });

  test('an early failure still names a supported target (021 §Errors optional fields)', () => {
    expect(failure({ target: 'references', bogus: 1 }).context.target).toBe('references');
    expect(failure({ target: 'docs', limit: 1.5 }).context.target).toBe('wiki');
    expect(
      failure({ target: 'step_log', name: 'n', dagRunId: 'r', stepName: 's', query: '?tail=1' }).context.uri,
    ).toBeUndefined();
  });

  test('URI mode fields feed the echoes of step_log (021 §Output)', () => {
    const request = parseReadInput(
      { uri: 'dagu://runs/n/r1/sub/c1/steps/s%2F1/foreach/2/steps/body/logs?stream=stderr' },
      {},
    );
    const result = readSuccess(request, {});
    expect(result.structuredContent).toMatchObject({
      target: 'step_log',
      name: 'n',
      dagRunId: 'r1',
      subRunId: 'c1',
      stepName: 's/1',
      item: '2',
      bodyStepName: 'body',
    });
    expect(result.content[1]).toMatchObject({ type: 'resource_link', name: 'sub_dag_run_foreach_step_log' });
  });
});

describe('parseReadInput: target mode (021 §Input, §Target contracts)', () => {
  test('builds the canonical URI with the supplied query appended', () => {
    const request = parseReadInput(
      { target: 'step_log', name: 'n', dagRunId: 'r1', stepName: 'a b', query: 'tail=10' },
      {},
    );
    expect(request.uri).toBe('dagu://runs/n/r1/steps/a%20b/logs?tail=10');
    expect(request.query).toEqual({ tail: 10 });
  });

  test('dags and runs have no uri in target mode; deprecated aliases resolve', () => {
    expect(parseReadInput({ target: 'dags', query: 'page=2' }, {}).uri).toBeUndefined();
    expect(parseReadInput({ target: 'docs' }, {}).target).toBe('wiki');
    expect(parseReadInput({ target: 'doc', workspace: 'team', path: 'a/b' }, {}).uri).toBe('dagu://wiki/team/a%2Fb');
  });

  test.each([
    [{ target: 'step_log', name: 'n', dagRunId: 'r', stepName: 's', item: '1' }, 'bodyStepName'],
    [{ target: 'step_log', name: 'n', dagRunId: 'r', stepName: 's', bodyStepName: 'b' }, 'item'],
    [{ target: 'dag', name: 'bad/name' }, 'name'],
    [{ target: 'run', name: 'n', dagRunId: 'bad id' }, 'dagRunId'],
    [{ target: 'references', password: '  ' }, 'password'],
    [{ target: 'step_log', name: 'n', dagRunId: 'r', stepName: 's', query: 'tail=1&head=1' }, 'query'],
    [{ target: 'run', name: 'n', dagRunId: 'r', query: 'x=1' }, 'query'],
  ])('%j fails on %s', (args, field) => {
    const { error } = failure(args);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe(field);
  });

  test('mixed addressing carries both field and details (dagu-model §10)', () => {
    const several = failure({ uri: 'dagu://dags', target: 'dags', name: 'x' });
    expect(several.error.field).toBe('target');
    expect(several.error.details).toEqual({ fields: ['target', 'name', 'uri'] });
    expect(several.context.uri).toBe('dagu://dags');
    const one = failure({ uri: 'dagu://dags', name: 'x', workspace: 'w' });
    expect(one.error).toMatchObject({ code: 'invalid_tool_input', field: 'name' });
    expect(one.error.details).toEqual({ fields: ['name', 'workspace', 'uri'] });
  });

  test.each([[''], ['   '], ['\t\n']])('a target of %j is invalid_tool_input on target', (target) => {
    expect(failure({ target }).error).toMatchObject({ code: 'invalid_tool_input', field: 'target' });
  });

  test('neither mode: invalid_tool_input without a field', () => {
    expect(failure({}).error.field).toBeUndefined();
  });
});

describe('parseReadInput: the workbook target (021 Workbook, workbook.md)', () => {
  test('path is trimmed, the password kept exactly, no uri; the result echoes path, never the password', () => {
    const request = parseReadInput({ target: 'workbook', path: '  out/report.xlsx ', password: '  p w  ' }, {});
    expect(request.fields).toEqual({ target: 'workbook', path: 'out/report.xlsx', password: '  p w  ' });
    expect(request.uri).toBeUndefined();
    const result = readSuccess(request, { path: '/work/out/report.xlsx' });
    expect(result.structuredContent).toEqual({
      target: 'workbook',
      data: { path: '/work/out/report.xlsx' },
      references: expect.any(Array) as unknown,
      path: 'out/report.xlsx',
    });
    expect(result.content).toEqual([{ type: 'text', text: 'Dagu read completed.' }]);
  });

  test('a file path is not held to the wiki page path rules', () => {
    expect(parseReadInput({ target: 'workbook', path: '/abs/My Book (v2).XLSM' }, {}).fields.path).toBe(
      '/abs/My Book (v2).XLSM',
    );
  });

  test.each([
    [{ target: 'workbook' }, 'path'],
    [{ target: 'workbook', password: 'x' }, 'path'],
    [{ target: 'workbook', path: 'a.xlsx', name: 'n' }, 'name'],
    [{ target: 'workbook', path: 'a.xlsx', workspace: 'w' }, 'workspace'],
    [{ target: 'workbook', path: 'a.xlsx', password: 7 }, 'password'],
    [{ target: 'wiki_page', workspace: 'w', path: 'p', password: 'x' }, 'password'],
  ])('%j fails on %s', (args, field) => {
    const { error, context } = failure(args);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe(field);
    expect(context.target).toBe(args.target);
  });

  test('an empty password counts as absent (021 §Input)', () => {
    expect(parseReadInput({ target: 'workbook', path: 'a.xlsx', password: '' }, {}).fields.password).toBeUndefined();
  });
});
