import type { Precondition } from '@dagu-mcp/dag-spec';
import { substituteCommands } from './command-substitution';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import { runProcess } from './process-runner';
import { compileAuthorRegex } from '../core/author-regex';

/**
 * Conditions of `preconditions` and `repeat_policy` (Dagu spec 023):
 *
 * - with `expected` (value match): the condition text is interpolated (plain
 *   mode: `$VAR`, `${VAR}`, `${params.X}`, step references; legacy backtick
 *   substitution runs too), then it is met when one of its lines equals
 *   `expected`, or, for `expected: re:<pattern>`, when the pattern matches a line
 *   (RE2 syntax, matched in linear time: `core/author-regex.ts`);
 * - without `expected` (command check): the text runs in the step's shell,
 *   working directory and environment; exit code 0 = met, any other code or a
 *   failure to start = not met; its output is discarded.
 *
 * `negate: true` inverts met/not met; an evaluation error (bad regex, failed
 * substitution) is never inverted.
 */

/** Where conditions are evaluated. */
export interface ConditionContext {
  scope: InterpolationScope;
  /** Shell argv (`['/bin/sh']`, `['bash', '-e']`). */
  shell: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  positional: readonly string[];
  signal: AbortSignal;
  killGraceMs: number;
}

/** Outcome of one condition or a list. */
export type ConditionResult =
  { kind: 'met' } | { kind: 'not_met'; condition: string } | { kind: 'error'; error: string };

function matches(text: string, expected: string): boolean | { error: string } {
  const lines = text.split('\n');
  if (!expected.startsWith('re:')) return lines.some((line) => line === expected) || text === expected;
  const test = compileAuthorRegex(expected.slice(3));
  if (typeof test !== 'function') return { error: `invalid regular expression in expected: ${test.error}` };
  return lines.some((line) => test(line));
}

/** Runs a command check; true when it exits 0. */
async function commandSucceeds(command: string, context: ConditionContext): Promise<boolean> {
  const [file, ...shellArgs] = context.shell;
  const outcome = await runProcess({
    file: file ?? '/bin/sh',
    args: [...shellArgs, '-c', command, file ?? 'sh', ...context.positional],
    cwd: context.cwd,
    env: context.env,
    signal: context.signal,
    killGraceMs: context.killGraceMs,
    onStdout: () => undefined,
    onStderr: () => undefined,
  });
  return outcome.exitCode === 0;
}

/** Evaluates one condition. */
export async function checkCondition(condition: Precondition, context: ConditionContext): Promise<ConditionResult> {
  let met: boolean;
  if (condition.expected !== undefined) {
    let text = interpolate(condition.condition, context.scope, 'plain');
    try {
      text = await substituteCommands(text, {
        shell: context.shell[0] ?? '/bin/sh',
        env: context.env,
        cwd: context.cwd,
      });
    } catch (error) {
      return { kind: 'error', error: error instanceof Error ? error.message : String(error) };
    }
    const result = matches(text, condition.expected);
    if (typeof result === 'object') return { kind: 'error', error: result.error };
    met = result;
  } else {
    met = await commandSucceeds(interpolate(condition.condition, context.scope, 'shell'), context);
  }
  if (condition.negate === true) met = !met;
  return met ? { kind: 'met' } : { kind: 'not_met', condition: condition.condition };
}

/** Evaluates a list in order (logical AND; every entry is evaluated, spec 023). */
export async function checkConditions(
  conditions: readonly Precondition[],
  context: ConditionContext,
): Promise<ConditionResult> {
  let first: ConditionResult = { kind: 'met' };
  for (const condition of conditions) {
    if (context.signal.aborted) return { kind: 'error', error: 'aborted' };
    const result = await checkCondition(condition, context);
    if (result.kind === 'error') return result;
    if (result.kind === 'not_met' && first.kind === 'met') first = result;
  }
  return first;
}
