import { expandVariables, interpolate, type InterpolationScope, type StepRefValues } from './interpolate';

const scope: InterpolationScope = {
  params: new Map([
    ['FOO', 'foo'],
    ['1', 'first'],
  ]),
  env: { HOME: '/home/u', FOO: 'foo', PATH_PART: 'a b' },
  outputVars: new Map([
    ['OUT', 'value'],
    ['JSON', '{"a": {"b": [1, "two"]}}'],
  ]),
  steps: new Map<string, StepRefValues>([
    ['build', { outputs: { image_tag: 'v1.2.3' }, fields: { title: 'hello' }, exitCode: 0 }],
    ['failed', { outputs: {}, fields: {}, exitCode: 3 }],
  ]),
  context: { runId: 'run-1', dagName: 'dag-1', attemptId: 'att-1' },
};

describe('interpolate (shell mode: text a shell will run)', () => {
  it.each([
    ['${params.FOO}', 'foo'],
    ['${env.HOME}/x', '/home/u/x'],
    ['${steps.build.outputs.image_tag}', 'v1.2.3'],
    ["'${steps.build.outputs.image_tag}'", "'v1.2.3'"],
    ['${steps.failed.exit_code}', '3'],
    ['${build.output.title}', 'hello'],
    ['${build.outputs.image_tag}', 'v1.2.3'],
    ['${failed.exit_code}', '3'],
    ['${context.run.id} ${context.dag.name}', 'run-1 dag-1'],
    ['${OUT}', 'value'],
    ['${JSON.a.b[1]}', 'two'],
    ['${JSON.a}', '{"b":[1,"two"]}'],
  ])('%s → %s', (text, expected) => {
    expect(interpolate(text, scope, 'shell')).toBe(expected);
  });

  it('leaves plain $X, ${X} of params and env, $1 and shell syntax to the shell', () => {
    const text = 'echo $FOO ${FOO} $1 ${HOME:-x} $(date) `id` ${#FOO} $$';
    expect(interpolate(text, scope, 'shell')).toBe(text);
  });

  it('keeps unknown references literal', () => {
    expect(
      interpolate(
        '${params.NOPE} ${steps.nope.outputs.x} ${steps.build.outputs.nope} ${nope.output.x}',
        scope,
        'shell',
      ),
    ).toBe('${params.NOPE} ${steps.nope.outputs.x} ${steps.build.outputs.nope} ${nope.output.x}');
  });
});

describe('interpolate (plain mode: no shell runs)', () => {
  it('also resolves $X, ${X} and positional $1 from the environment and params', () => {
    expect(interpolate('$FOO ${HOME} $1 ${PATH_PART} $UNKNOWN', scope, 'plain')).toBe('foo /home/u first a b $UNKNOWN');
  });
});

describe('expandVariables', () => {
  it('expands $X, ${X}, ${env.X} and ${params.X} from a lookup, keeping unknown names', () => {
    const lookup = (name: string): string | undefined => ({ A: '1', B: 'two' })[name];
    expect(expandVariables('$A-${B}-${env.A}-${params.B}-$C', lookup)).toBe('1-two-1-two-$C');
  });
});
