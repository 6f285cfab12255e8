import { isReservedValueName, type EnvVar } from '@dagu-mcp/dag-spec';

/**
 * The environment of a step (dagu-model §3): layers merged in this order,
 * a later layer winning on the same name:
 *
 * 1. a clean base: only `PATH`, the locale and time zone of the service
 *    process, with `HOME`, `USER` and `LOGNAME` of the step user
 *    (`stepEnvBase`; docs/security.md: nothing of run-service's own
 *    environment, such as its database and Redis URLs, reaches a step);
 * 2. the DAG's `env`, in declaration order;
 * 3. the run's named params (exported under their names);
 * 4. `output:` variables of steps that finished before this one started;
 * 5. the step's own `env`;
 * 6. the engine's variables: `DAG_NAME`, `DAG_RUN_ID`, `DAG_RUN_LOG_FILE`
 *    (the run's `dagu://…/logs` URI: logs live in PostgreSQL, not in a file),
 *    `DAG_RUN_STEP_NAME`, `DAG_RUN_WORK_DIR`, `DAGU_OUTPUT_FILE`.
 *
 * Values of layers 2 and 5 may reference earlier variables (`${NAME}`,
 * `$NAME`); the caller passes the expander (see `interpolate.ts`).
 */

/**
 * A name a param or output may be exported under: one a POSIX shell can
 * export (positional params `1`, `2` are not exported; they become `$1`,
 * `$2`), and not a reserved one (`PATH`, `LD_*`, `DAG_*`, …, dagu-model §3).
 * Start and validation already refuse reserved names; this keeps a run
 * recorded before that rule (or any other path) from exporting one.
 */
export function isExportableName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !isReservedValueName(name);
}

/** Variables of the service process a step inherits (everything else it gets from the DAG and the engine). */
export const INHERITED_VARIABLES: readonly string[] = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR'];

/**
 * The base environment of every step: {@link INHERITED_VARIABLES} and the
 * `LC_*` locale variables of `source`, nothing else; `HOME`, `USER` and
 * `LOGNAME` are the step user's when there is one, else `source`'s.
 */
export function stepEnvBase(
  source: NodeJS.ProcessEnv,
  user?: { readonly name: string; readonly home: string },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (INHERITED_VARIABLES.includes(key) || key.startsWith('LC_')) out[key] = value;
  }
  if (user !== undefined) return { ...out, HOME: user.home, USER: user.name, LOGNAME: user.name };
  for (const key of ['HOME', 'USER', 'LOGNAME']) {
    const value = source[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Applies `vars` over `target` in order; each value is first expanded against
 * the environment built so far (so `B: ${A}/x` sees an `A` declared above it).
 *
 * @returns a new object; `target` is not modified.
 */
export function applyEnvVars(
  target: Readonly<Record<string, string>>,
  vars: readonly EnvVar[],
  expand: (value: string, env: Readonly<Record<string, string>>) => string,
): Record<string, string> {
  const out: Record<string, string> = { ...target };
  for (const entry of vars) out[entry.key] = expand(entry.value, out);
  return out;
}

/** Adds `values` (params, output variables) whose names are exportable. */
export function withExported(
  target: Readonly<Record<string, string>>,
  values: Iterable<readonly [string, string]>,
): Record<string, string> {
  const out: Record<string, string> = { ...target };
  for (const [name, value] of values) if (isExportableName(name)) out[name] = value;
  return out;
}

/** The engine's own variables of one step (layer 6). */
export interface EngineVariables {
  dagName: string;
  dagRunId: string;
  /** The run's log URI (`dagu://runs/{name}/{id}/logs`). */
  logsUri: string;
  stepName: string;
  workDir: string;
  /** Path of this attempt's output file; absent for steps that run no process. */
  outputFile?: string;
}

/** Layer 6 over `target`. */
export function withEngineVariables(
  target: Readonly<Record<string, string>>,
  vars: EngineVariables,
): Record<string, string> {
  return {
    ...target,
    DAG_NAME: vars.dagName,
    DAG_RUN_ID: vars.dagRunId,
    DAG_RUN_LOG_FILE: vars.logsUri,
    DAG_RUN_STEP_NAME: vars.stepName,
    DAG_RUN_WORK_DIR: vars.workDir,
    ...(vars.outputFile !== undefined ? { DAGU_OUTPUT_FILE: vars.outputFile } : {}),
  };
}
