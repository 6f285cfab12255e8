import { locateErrors } from './error-locations';
import { parseDagSpec } from './parse-dag-spec';

/** The errors of `yaml` with the line each is located at (the editor marks errors at their line). */
function located(yaml: string): Array<{ error: string; line: number; column: number }> {
  const { errors } = parseDagSpec(yaml, { name: 'demo' });
  return locateErrors(yaml, errors).map((l) => ({ error: errors[l.index] ?? '', line: l.line, column: l.column }));
}

describe('locateErrors', () => {
  test('an unknown field of a step is located at its key', () => {
    const yaml = 'steps:\n  - name: a\n    command: echo a\n  - name: b\n    comand: echo b\n';
    expect(located(yaml)).toContainEqual({ error: expect.stringContaining('comand'), line: 5, column: 5 });
  });

  test('a step without a command is located at the step', () => {
    const yaml = 'description: x\nsteps:\n  - name: ok\n    command: echo\n  - name: empty\n';
    const [first] = located(yaml);
    expect(first).toMatchObject({ line: 5, error: expect.stringContaining("step 'empty'") });
  });

  test('a YAML syntax error takes the parser position', () => {
    const yaml = 'steps:\n  - name: a\n    command: [echo\n';
    const [first] = located(yaml);
    expect(first?.error).toMatch(/^invalid YAML/);
    expect(first?.line).toBeGreaterThanOrEqual(3);
  });

  test('a bad top-level field is located at its key; a map of steps by key', () => {
    const yaml =
      'max_active_runs: -5\nsteps:\n  build:\n    command: make\n  test:\n    depends: nope\n    command: make test\n';
    const lines = located(yaml).map((l) => l.line);
    expect(lines).toContain(1);
    expect(lines).toContain(6); // the unknown dependency, at `depends`
  });

  test('errors that name no place get no location', () => {
    expect(locateErrors('', ['DAG spec is empty'])).toEqual([]);
  });
});
