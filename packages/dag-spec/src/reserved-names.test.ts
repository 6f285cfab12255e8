import { isReservedValueName } from './reserved-names';
import { parseDagSpec } from './parse-dag-spec';

/** dagu-model §3: no param, output or input may set PATH, LD_*, DAG_*, … */
describe('reserved value names', () => {
  test.each([
    ['PATH', true],
    ['HOME', true],
    ['SHELL', true],
    ['IFS', true],
    ['ENV', true],
    ['BASH_ENV', true],
    ['LD_PRELOAD', true],
    ['DYLD_INSERT_LIBRARIES', true],
    ['PYTHONPATH', true],
    ['PERL5LIB', true],
    ['NODE_OPTIONS', true],
    ['DAG_RUN_ID', true],
    ['DAGU_OUTPUT_FILE', true],
    ['path', false],
    ['DAY', false],
    ['MY_PATH', false],
    ['ENVIRONMENT', false],
  ])('%s reserved: %s', (name, reserved) => {
    expect(isReservedValueName(name)).toBe(reserved);
  });

  test.each([
    ['a declared param', 'params:\n  - LD_PRELOAD: x\nsteps:\n  - name: a\n    run: echo hi\n', 'params'],
    ['a string param', 'params: "PATH=/tmp"\nsteps:\n  - name: a\n    run: echo hi\n', 'params'],
    ['an output variable', 'steps:\n  - name: a\n    run: echo hi\n    output: PATH\n', 'output'],
    ['an outputs name', 'steps:\n  - name: a\n    run: echo hi\n    outputs: [BASH_ENV]\n', 'outputs[0]'],
    [
      'an output field',
      'steps:\n  - name: a\n    run: echo hi\n    output:\n      DAG_NAME: {from: stdout}\n',
      'output.DAG_NAME',
    ],
    [
      'a human-task form field',
      'steps:\n  - id: ask\n    action: human.task\n    with:\n      prompt: p\n      form:\n        properties:\n          DAGU_X: {type: string}\n',
      'with.form.properties',
    ],
    [
      'an approval input',
      'steps:\n  - name: gate\n    run: echo hi\n    approval:\n      input: [LD_LIBRARY_PATH]\n',
      'approval.input',
    ],
  ])('%s with a reserved name is invalid', (_label, spec, field) => {
    const result = parseDagSpec(spec, { name: 'reserved' });
    expect(result.valid).toBe(false);
    expect(result.errors.join('\n')).toContain(`field '${field}'`);
    expect(result.errors.join('\n')).toContain('reserved');
  });
});
