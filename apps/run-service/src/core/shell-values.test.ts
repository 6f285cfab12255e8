import type { InterpolationScope } from './interpolate';
import { interpolateForShell, isPosixShell } from './shell-values';

const ATTACK = '$(id >&2) `id`; id | id';

const scope: InterpolationScope = {
  params: new Map([
    ['X', ATTACK],
    ['WORDS', 'a b'],
  ]),
  env: { HOME: '/home/u' },
  outputVars: new Map([['foreach', JSON.stringify({ item: 'it em', index: 0, key: 'k' })]]),
  steps: new Map([['ask', { outputs: { note: "x'; id; '" }, fields: {} }]]),
  context: { runId: 'run-1', dagName: 'dag-1', attemptId: 'att-1' },
};

/** dagu-model §3 "Values never become shell code". */
describe('interpolateForShell', () => {
  it.each([
    ['echo ${params.X}', 'echo ${DAGU_V_1}'],
    ['echo "${params.X}"', 'echo "${DAGU_V_1}"'],
    ["echo '${params.X}'", `echo ''"\${DAGU_V_1}"''`],
    ["echo 'note=${steps.ask.outputs.note}!'", `echo 'note='"\${DAGU_V_1}"'!'`],
    ['echo ${foreach.item} ${params.WORDS}', 'echo ${DAGU_V_1} ${DAGU_V_2}'],
    ['echo ${params.X} ${params.X}', 'echo ${DAGU_V_1} ${DAGU_V_1}'],
    ['echo "it\'s ${params.X}"', 'echo "it\'s ${DAGU_V_1}"'],
    ['echo \\${params.X}', 'echo \\${params.X}'],
    ["# don't\necho '${params.X}'", `# don't\necho ''"\${DAGU_V_1}"''`],
    [
      "cat <<EOF\nit's ${params.X}\nEOF\necho '${params.X}'",
      `cat <<EOF\nit's \${DAGU_V_1}\nEOF\necho ''"\${DAGU_V_1}"''`,
    ],
    ["cat <<'EOF'\n${params.X}\nEOF\necho ${params.X}", "cat <<'EOF'\n${params.X}\nEOF\necho ${DAGU_V_1}"],
    ['cat <<-EOF\n\t${params.X}\n\tEOF\necho ok', 'cat <<-EOF\n\t${DAGU_V_1}\n\tEOF\necho ok'],
  ])('%s → %s', (text, expected) => {
    expect(interpolateForShell(text, scope).text).toBe(expected);
  });

  it('puts the values into the generated variables, never into the text', () => {
    const result = interpolateForShell('echo ${params.X} "${steps.ask.outputs.note}" ${foreach.item}', scope);
    expect(result.vars).toEqual({ DAGU_V_1: ATTACK, DAGU_V_2: "x'; id; '", DAGU_V_3: 'it em' });
    expect(result.text).not.toContain('id');
  });

  it("leaves the shell's own syntax and unknown references alone", () => {
    const text = 'echo $X ${X} $1 ${HOME:-x} $(date) `id` ${#X} $$ ${unknown.ref}';
    expect(interpolateForShell(text, scope)).toEqual({ text, vars: {} });
  });
});

describe('isPosixShell', () => {
  it.each([
    [['/bin/sh'], true],
    [['bash', '-e'], true],
    [['/usr/bin/zsh'], true],
    [['/usr/bin/env', 'bash'], true],
    [['env', '-i', 'A=1', 'sh'], true],
    [['python3'], false],
    [['/usr/bin/env', 'python3'], false],
    [['/usr/bin/node'], false],
  ])('%j: %s', (argv, posix) => {
    expect(isPosixShell(argv)).toBe(posix);
  });
});
