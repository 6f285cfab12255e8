import { parseDagSpec } from './index';

/** Preview warnings for references that will not resolve at run time. */
function warningsOf(yaml: string): string[] {
  const result = parseDagSpec(yaml, { name: 'w' });
  expect(result.errors).toEqual([]);
  expect(result.valid).toBe(true);
  return result.warnings;
}

describe('findReferenceWarnings (through parseDagSpec)', () => {
  it('names the step, the field and the reference of an unknown step, with a suggestion', () => {
    const yaml = [
      'steps:',
      '  - id: build',
      '    run: echo "tag=1" >> "$DAGU_OUTPUT_FILE"',
      '    outputs: [tag]',
      '  - id: deploy',
      '    depends: [build]',
      '    run: echo ${steps.biuld.outputs.tag}',
    ].join('\n');
    expect(warningsOf(yaml)).toEqual([
      "step 'deploy': field 'run': step 'biuld' does not exist; did you mean 'build'? (value: ${steps.biuld.outputs.tag})",
    ]);
  });

  it('warns when the named step is not upstream, directly or transitively', () => {
    const yaml = [
      'steps:',
      '  - {id: a, run: echo a, outputs: [x]}',
      '  - {id: b, run: "echo ${steps.a.outputs.x}"}',
      '  - {id: c, depends: [b], run: "echo ${steps.a.outputs.x}"}',
      '  - {id: d, depends: [a], run: "echo ${steps.a.outputs.x}"}',
      '  - {id: e, depends: [d], run: "echo ${steps.a.outputs.x}"}',
    ].join('\n');
    expect(warningsOf(yaml)).toEqual([
      "step 'b': field 'run': step 'a' is not upstream of this step (add it to depends) (value: ${steps.a.outputs.x})",
      "step 'c': field 'run': step 'a' is not upstream of this step (add it to depends) (value: ${steps.a.outputs.x})",
    ]);
  });

  it('counts outputs, output names, form fields and approval inputs as declared', () => {
    const yaml = [
      'steps:',
      '  - {id: a, run: echo a, outputs: [x], output: VAR}',
      '  - id: ask',
      '    action: human.task',
      '    with: {prompt: p, form: {type: object, properties: {env: {type: string}}}}',
      '  - {id: gate, run: "true", approval: {input: [NOTE]}}',
      '  - id: use',
      '    depends: [a, ask, gate]',
      '    run: echo ${steps.a.outputs.x} ${steps.a.outputs.VAR} ${steps.ask.outputs.env} ${steps.gate.outputs.NOTE}',
      '    env:',
      '      - MISSING: ${steps.gate.outputs.NOT_THERE}',
    ].join('\n');
    expect(warningsOf(yaml)).toEqual([
      "step 'use': field 'env.MISSING': step 'gate' declares no output 'NOT_THERE' (value: ${steps.gate.outputs.NOT_THERE})",
    ]);
  });

  it('skips what cannot be known before the run: sub-DAG outputs, form-less human tasks', () => {
    const yaml = [
      'steps:',
      '  - {id: call, action: dag.run, with: {dag: child}}',
      '  - {id: ask, action: human.task, with: {prompt: p}}',
      '  - {id: use, depends: [call, ask], run: "echo ${steps.call.outputs.any} ${steps.ask.outputs.note}"}',
      '---',
      'name: child',
      'steps:',
      '  - {id: c, run: echo c}',
    ].join('\n');
    expect(warningsOf(yaml)).toEqual([]);
  });

  it('warns on an undeclared param, in sub-DAGs and handlers too', () => {
    const yaml = [
      'params:',
      '  - DAY: mon',
      'handler_on:',
      '  exit: {run: "echo ${params.DYA}"}',
      'steps:',
      '  - {id: a, run: "echo ${params.DAY} ${params.MONTH}"}',
      '---',
      'name: child',
      'steps:',
      '  - {id: c, with: {}, action: http.request}',
    ].join('\n');
    const result = parseDagSpec(yaml, { name: 'w' });
    expect(result.errors.length).toBeGreaterThan(0);
    const valid = yaml.replace('  - {id: c, with: {}, action: http.request}', '  - {id: c, run: "echo ${params.X}"}');
    expect(warningsOf(valid)).toEqual([
      "step 'a': field 'run': param 'MONTH' is not declared in params (value: ${params.MONTH})",
      "handler_on.exit: field 'run': param 'DYA' is not declared in params; did you mean 'DAY'? (value: ${params.DYA})",
      "sub-DAG 'child': step 'c': field 'run': param 'X' is not declared in params (value: ${params.X})",
    ]);
  });

  it('lets a foreach body read its own upstream steps and the steps before the foreach step', () => {
    const yaml = [
      'steps:',
      '  - {id: first, run: echo 1, outputs: [v]}',
      '  - id: loop',
      '    depends: [first]',
      '    foreach:',
      '      items: [a, b]',
      '      steps:',
      '        - {id: one, run: "echo ${steps.first.outputs.v}", outputs: [w]}',
      '        - {id: two, depends: [one], run: "echo ${steps.one.outputs.w} ${steps.two.outputs.w}"}',
    ].join('\n');
    expect(warningsOf(yaml)).toEqual([
      "step 'loop': step 'two': field 'run': step 'two' is not upstream of this step (add it to depends) (value: ${steps.two.outputs.w})",
    ]);
  });

  it('is empty for an invalid spec', () => {
    const result = parseDagSpec('steps:\n  - {id: a, run: "echo ${steps.zz.outputs.x}", depends: [nope]}\n', {
      name: 'w',
    });
    expect(result.valid).toBe(false);
    expect(result.warnings).toEqual([]);
  });
});

describe('did-you-mean on unknown keys and dependencies', () => {
  it('suggests the closest key of a step and of the root', () => {
    const result = parseDagSpec('steps:\n  - name: a\n    comand: echo hi\n', { name: 'w' });
    expect(result.errors).toContain("step 'a': field 'comand': unknown field; did you mean 'command'?");
    const root = parseDagSpec('schedul: "* * * * *"\nsteps:\n  - {name: a, run: echo}\n', { name: 'w' });
    expect(root.errors).toEqual(["field 'schedul': unknown field; did you mean 'schedule'?"]);
  });

  it('suggests the closest step for an unknown dependency, and nothing when none is close', () => {
    const result = parseDagSpec(
      'steps:\n  - {name: extract, run: echo}\n  - {name: load, depends: [extrct], run: echo}\n  - {name: z, depends: [qqqqqqqq], run: echo}\n',
      { name: 'w' },
    );
    expect(result.errors).toEqual([
      "step load depends on non-existent step extrct; did you mean 'extract'?",
      'step z depends on non-existent step qqqqqqqq',
    ]);
  });
});
