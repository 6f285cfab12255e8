import { jsonValueToText, selectJsonPath, tryParseJson } from './json-path';

/**
 * Value interpolation of dagu-model §3 ("Interpolation") as this engine
 * applies it before a step starts.
 *
 * Dagu-owned references, replaced everywhere:
 * - `${params.NAME}` — a run param;
 * - `${env.NAME}` — a variable of the step's merged environment;
 * - `${steps.<id>.outputs.<name>}` — a value the step wrote to `$DAGU_OUTPUT_FILE`;
 * - `${steps.<id>.exit_code}` / `${<id>.exit_code}` — a finished step's exit code;
 * - `${steps.<id>.stdout}` / `${steps.<id>.stderr}` — a finished step's trimmed
 *   stdout / stderr text, only where the engine captured it (foreach
 *   `collect` expressions; logs are not files here, unlike Dagu's log path);
 * - `${<id>.output.<name>}` — a field of a step's structured `output` map;
 * - `${context.run.id}`, `${context.dag.name}`, `${context.run.attempt_id}`,
 *   `${context.paths.artifacts_dir}`;
 * - `${NAME}` where NAME is an `output:` variable of an earlier step, and
 *   `${NAME.path}` reading a JSON output variable by path.
 * `<id>` is a step id, or a step name when no id matches.
 *
 * Shell text (`run`, `script`, command preconditions) goes through
 * `interpolateForShell` (`shell-values.ts`) instead: resolved values become
 * environment-variable expansions, never text (dagu-model §3).
 *
 * Plain `$NAME` and `${NAME}` for params and environment variables are left
 * to the shell in command and script text (`mode: 'shell'`): params and
 * output variables are exported to every step, so the shell expands them with
 * its own quoting rules (no injection through a value). Where no shell runs
 * — exec argv, http.request fields, working_dir, env values, value-match
 * conditions — `mode: 'plain'` also replaces `$NAME` / `${NAME}` / `$1` from
 * the merged environment.
 *
 * An unknown reference stays as written (Dagu keeps unresolved references literal).
 */

/** What a finished step exposes to later steps. */
export interface StepRefValues {
  /** `outputs` written to `$DAGU_OUTPUT_FILE`. */
  outputs: Readonly<Record<string, string>>;
  /** Fields of a structured `output` map. */
  fields: Readonly<Record<string, string>>;
  exitCode?: number;
  /** Trimmed stdout / stderr text, when captured (foreach `collect`). */
  stdout?: string;
  stderr?: string;
}

/** Everything a reference can resolve against. */
export interface InterpolationScope {
  readonly params: ReadonlyMap<string, string>;
  /** The merged environment of the step (process env, DAG env, params, output variables, step env). */
  readonly env: Readonly<Record<string, string>>;
  /** `output:` variables of finished steps, by name. */
  readonly outputVars: ReadonlyMap<string, string>;
  /** Finished steps, by id and by name. */
  readonly steps: ReadonlyMap<string, StepRefValues>;
  readonly context: {
    readonly runId: string;
    readonly dagName: string;
    readonly attemptId: string;
    /** `${context.paths.artifacts_dir}`: `<run directory>/artifacts` (dagu-actions §1.7 example); absent where no run directory is known. */
    readonly artifactsDir?: string;
  };
}

/** `shell`: text a shell will run; `plain`: text used as is. */
export type InterpolationMode = 'shell' | 'plain';

const REFERENCE = /\$\{([^{}\s]+)\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])/g;

/** Resolves the inside of `${…}`; `undefined` = unknown. */
function resolveBraced(expr: string, scope: InterpolationScope, mode: InterpolationMode): string | undefined {
  const parts = expr.split('.');
  const [head, second, third, fourth] = parts;
  if (head === undefined) return undefined;
  if (head === 'params' && parts.length === 2 && second !== undefined) return scope.params.get(second);
  if (head === 'env' && parts.length === 2 && second !== undefined) return scope.env[second];
  if (head === 'context') return resolveContext(parts.slice(1).join('.'), scope);
  if (head === 'steps' && second !== undefined) {
    const step = scope.steps.get(second);
    if (step === undefined) return undefined;
    if (third === 'outputs' && fourth !== undefined && parts.length === 4) return step.outputs[fourth];
    if ((third === 'exit_code' || third === 'exitCode') && parts.length === 3) return exitCodeText(step);
    if (third === 'stdout' && parts.length === 3) return step.stdout;
    if (third === 'stderr' && parts.length === 3) return step.stderr;
    return undefined;
  }
  const step = scope.steps.get(head);
  if (step !== undefined && second !== undefined) {
    if (second === 'output' && third !== undefined && parts.length === 3) return step.fields[third];
    if (second === 'outputs' && third !== undefined && parts.length === 3) return step.outputs[third];
    if ((second === 'exit_code' || second === 'exitCode') && parts.length === 2) return exitCodeText(step);
  }
  const variable = scope.outputVars.get(head);
  if (variable !== undefined)
    return parts.length === 1 ? variable : selectFromVariable(variable, parts.slice(1).join('.'));
  if (mode === 'plain' && parts.length === 1) return scope.env[head] ?? scope.params.get(head);
  return undefined;
}

/**
 * The value of the reference `${expression}` (its inside, e.g.
 * `params.DAY`), or `undefined` when the engine does not resolve it (left to
 * the shell in `shell` mode). Used by `shell-values.ts` to put resolved values
 * into the environment instead of the text (dagu-model §3).
 */
export function resolveReference(
  expression: string,
  scope: InterpolationScope,
  mode: InterpolationMode,
): string | undefined {
  return resolveBraced(expression, scope, mode);
}

function resolveContext(path: string, scope: InterpolationScope): string | undefined {
  switch (path) {
    case 'run.id':
      return scope.context.runId;
    case 'dag.name':
      return scope.context.dagName;
    case 'run.attempt_id':
      return scope.context.attemptId;
    case 'paths.artifacts_dir':
      return scope.context.artifactsDir;
    default:
      return undefined;
  }
}

function exitCodeText(step: StepRefValues): string | undefined {
  return step.exitCode === undefined ? undefined : String(step.exitCode);
}

function selectFromVariable(value: string, path: string): string | undefined {
  const parsed = tryParseJson(value);
  if (!parsed.ok) return undefined;
  const selected = selectJsonPath(parsed.value, path);
  return selected.found ? jsonValueToText(selected.value) : undefined;
}

/**
 * Replaces the references in `text` (see the module comment for the forms).
 *
 * @param mode `shell` leaves `$NAME` / `${NAME}` of params and env to the shell;
 *   `plain` resolves them from `scope.env` (then params, for positional `$1`).
 * @returns the text with every known reference replaced; unknown ones kept.
 */
export function interpolate(text: string, scope: InterpolationScope, mode: InterpolationMode): string {
  if (!text.includes('$')) return text;
  return text.replace(REFERENCE, (whole: string, braced: string | undefined, bare: string | undefined) => {
    if (braced !== undefined) return resolveBraced(braced, scope, mode) ?? whole;
    if (mode === 'shell' || bare === undefined) return whole;
    return scope.env[bare] ?? scope.params.get(bare) ?? whole;
  });
}

/**
 * The Dagu-owned references of `text` (`${steps.…}`, `${foreach.…}`,
 * `${params.…}`, `${context.…}`) that `scope` cannot resolve — what fails a
 * foreach `collect` expression (the aggregate shape Dagu users know).
 */
export function unresolvedReferences(text: string, scope: InterpolationScope): string[] {
  const missing: string[] = [];
  for (const match of text.matchAll(REFERENCE)) {
    const braced = match[1];
    if (braced === undefined || !/^(steps|foreach|params|context)\./.test(braced)) continue;
    if (resolveBraced(braced, scope, 'plain') === undefined) missing.push(match[0]);
  }
  return missing;
}

/**
 * Expands `$NAME` and `${NAME}` from `lookup` only (env and param values,
 * before any step exists). Unknown names stay as written.
 */
export function expandVariables(text: string, lookup: (name: string) => string | undefined): string {
  if (!text.includes('$')) return text;
  return text.replace(REFERENCE, (whole: string, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare;
    if (name === undefined) return whole;
    if (name.startsWith('env.')) return lookup(name.slice(4)) ?? whole;
    if (name.startsWith('params.')) return lookup(name.slice(7)) ?? whole;
    return lookup(name) ?? whole;
  });
}
