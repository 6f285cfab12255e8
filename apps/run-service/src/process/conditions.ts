import type { Precondition } from '@dagu-mcp/dag-spec';
import { runCommandCapture } from './command-substitution';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import type { StepLauncher } from '../core/step-launch';
import { interpolateForShell } from '../core/shell-values';
import { runProcess } from './process-runner';
import { compileAuthorRegex } from '../core/author-regex';

/**
 * Conditions of `preconditions` and `repeat_policy` (Dagu spec 023):
 *
 * - with `expected` (value match): the condition text is interpolated (plain
 *   mode: `$VAR`, `${VAR}`, `${params.X}`, step references), then it is met
 *   when one of its lines equals `expected`, or, for `expected: re:<pattern>`,
 *   when the pattern matches a line (RE2 syntax, matched in linear time:
 *   `core/author-regex.ts`). Legacy backtick substitution runs on the
 *   author's text only (dagu-model §3): each `` `cmd` `` the author wrote runs
 *   with its references as variable expansions, and backticks inside a value
 *   stay characters;
 * - without `expected` (command check): the text runs in the step's shell,
 *   working directory and environment, values as variable expansions
 *   (`shell-values.ts`); exit code 0 = met, any other code or a failure to
 *   start = not met; its output is discarded.
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
  /** Command checks and substitutions are the DAG author's code: they run as the step user. */
  launcher: StepLauncher;
}

/**
 * Why a condition was not met (dagu-model §5 `skipReason`): the condition as
 * written, what it had to give (`expected`, or `exit code 0` for a command
 * check; prefixed `not ` under `negate`) and what it gave (`actual`: the
 * evaluated text, at most {@link MAX_ACTUAL_CHARS} characters, or
 * `exit code <n>`).
 */
export interface UnmetCondition {
  condition: string;
  expected: string;
  actual: string;
}

/** The longest `actual` a skip reason keeps (the rest is cut, with `…`). */
export const MAX_ACTUAL_CHARS = 500;

/** Outcome of one condition or a list. */
export type ConditionResult =
  { kind: 'met' } | ({ kind: 'not_met' } & UnmetCondition) | { kind: 'error'; error: string };

function shortened(text: string): string {
  return text.length > MAX_ACTUAL_CHARS ? `${text.slice(0, MAX_ACTUAL_CHARS - 1)}…` : text;
}

function matches(text: string, expected: string): boolean | { error: string } {
  const lines = text.split('\n');
  if (!expected.startsWith('re:')) return lines.some((line) => line === expected) || text === expected;
  const test = compileAuthorRegex(expected.slice(3));
  if (typeof test !== 'function') return { error: `invalid regular expression in expected: ${test.error}` };
  return lines.some((line) => test(line));
}

/** Runs a command check; its exit code (0 = met). */
async function commandExitCode(condition: string, context: ConditionContext): Promise<number | null> {
  const [file, ...shellArgs] = context.shell;
  const command = interpolateForShell(condition, context.scope);
  const outcome = await runProcess({
    file: file ?? '/bin/sh',
    args: [...shellArgs, '-c', command.text, file ?? 'sh', ...context.positional],
    cwd: context.cwd,
    env: { ...context.env, ...command.vars },
    launcher: context.launcher,
    signal: context.signal,
    killGraceMs: context.killGraceMs,
    onStdout: () => undefined,
    onStderr: () => undefined,
  });
  return outcome.exitCode;
}

const BACKTICKS = /`([^`]*)`/g;

/**
 * The text of a value-match condition: the author's text outside backticks
 * interpolated as data; each `` `cmd` `` of the author's text run, its
 * references as variable expansions, and replaced by its trimmed stdout.
 *
 * @throws Error naming the command when a substitution fails
 */
async function conditionValue(condition: string, context: ConditionContext): Promise<string> {
  let out = '';
  let last = 0;
  for (const match of condition.matchAll(BACKTICKS)) {
    out += interpolate(condition.slice(last, match.index), context.scope, 'plain');
    const command = interpolateForShell(match[1] ?? '', context.scope);
    out +=
      command.text.trim() === ''
        ? ''
        : await runCommandCapture(command.text, {
            shell: context.shell[0] ?? '/bin/sh',
            env: { ...context.env, ...command.vars },
            cwd: context.cwd,
            launcher: context.launcher,
          });
    last = match.index + match[0].length;
  }
  return out + interpolate(condition.slice(last), context.scope, 'plain');
}

/** Evaluates one condition. */
export async function checkCondition(condition: Precondition, context: ConditionContext): Promise<ConditionResult> {
  let met: boolean;
  let expected: string;
  let actual: string;
  if (condition.expected !== undefined) {
    let text: string;
    try {
      text = await conditionValue(condition.condition, context);
    } catch (error) {
      return { kind: 'error', error: error instanceof Error ? error.message : String(error) };
    }
    const result = matches(text, condition.expected);
    if (typeof result === 'object') return { kind: 'error', error: result.error };
    met = result;
    expected = condition.expected;
    actual = shortened(text);
  } else {
    const exitCode = await commandExitCode(condition.condition, context);
    met = exitCode === 0;
    expected = 'exit code 0';
    actual = exitCode === null ? 'no exit code (killed)' : `exit code ${exitCode}`;
  }
  if (condition.negate === true) met = !met;
  if (met) return { kind: 'met' };
  return {
    kind: 'not_met',
    condition: condition.condition,
    expected: condition.negate === true ? `not ${expected}` : expected,
    actual,
  };
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
