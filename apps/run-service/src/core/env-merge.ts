import { isReservedValueName, type EnvVar } from '@dagu-mcp/dag-spec';

/**
 * The environment of a step (dagu-model §3): layers merged in this order,
 * a later layer winning on the same name:
 *
 * 1. the service process's environment (the base, as in Dagu), without
 *    run-service's own configuration variables;
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

/**
 * The process environment without unset entries and without `exclude`d
 * names (and their `<NAME>_FILE` forms): run-service passes its own
 * configuration variables there, so `DATABASE_URL`, `REDIS_URL` and the like
 * never reach a user's step.
 */
export function processEnvBase(source: NodeJS.ProcessEnv, exclude: Iterable<string> = []): Record<string, string> {
  const hidden = new Set<string>();
  for (const name of exclude) {
    hidden.add(name);
    hidden.add(`${name}_FILE`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined && !hidden.has(key)) out[key] = value;
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
