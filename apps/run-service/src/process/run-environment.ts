import { chmod, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { NormalizedDag } from '@dagu-mcp/dag-spec';
import { substituteAuthorCommands, substituteCommands } from './command-substitution';
import { applyEnvVars, isExportableName, withExported } from '../core/env-merge';
import { expandVariables } from '../core/interpolate';
import type { RunParam } from '../core/params';
import type { RunEnvironment } from '../core/run-types';
import type { StepLauncher } from '../core/step-launch';
import { adoptTree } from './run-isolation';

/** Inputs of {@link prepareRunEnvironment}. */
export interface RunEnvironmentInput {
  dag: NormalizedDag;
  params: readonly RunParam[];
  /** Params were evaluated by an earlier attempt (a retry reuses them as they are). */
  paramsEvaluated: boolean;
  processEnv: Readonly<Record<string, string>>;
  shell: string;
  /** Base of per-run directories (`RUN_WORK_DIR`). */
  workDirBase: string;
  dagRunId: string;
  /** Owns the run directory and runs backtick substitutions as the step user. */
  launcher: StepLauncher;
  /** The run's runtime profile variables (Dagu spec 022b), set on top of the DAG's `env`, taken literally; default none. */
  profileEnv?: Readonly<Record<string, string>>;
}

/** `~` and `~/x` → the home directory. */
function expandHome(path: string, env: Readonly<Record<string, string>>): string {
  if (path === '~') return env.HOME ?? homedir();
  if (path.startsWith('~/')) return join(env.HOME ?? homedir(), path.slice(2));
  return path;
}

/**
 * Resolves a `working_dir` value: variables expanded, `~` expanded, relative
 * paths taken from `base`.
 */
export function resolveWorkingDir(value: string, base: string, expand: (text: string) => string): string {
  const path = expandHome(expand(value.trim()), {});
  return isAbsolute(path) ? path : resolve(base, path);
}

/** A file-system-safe directory name for a DAG name (DAG names are `[a-zA-Z0-9_.-]`; `.`/`..` are refused by dag-spec). */
function dirName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_.-]/g, '_');
}

/**
 * The per-run working directory of run `dagRunId` of DAG `dagName` (root or
 * child run): `<workDirBase>/<dag>/<run id>` (`RUN_WORK_DIR`, README
 * "Working directory"). Retention removes it with the run.
 */
export function runWorkDir(workDirBase: string, dagName: string, dagRunId: string): string {
  return join(workDirBase, dirName(dagName), dirName(dagRunId));
}

/**
 * Builds the run's environment. DAG `env` values are expanded in order
 * against the process env and earlier entries, then their backticks run;
 * param defaults are expanded against that environment and earlier params,
 * and the backticks the author wrote run with earlier params as variables
 * (`substituteAuthorCommands`). Values the caller gave are used literally.
 *
 * The run directory `<workDirBase>/<dag>/<run id>` is created; it is the
 * steps' default working directory unless the DAG sets `working_dir`
 * (relative values resolve against the run directory). It belongs to the
 * step user (docs/security.md), who can write there. With a step user the
 * run directory is also the steps' `HOME` and `TMPDIR` (mode 0700,
 * owned by the run's uid; its parents 0711, so no run lists another's), and a
 * retry's new uid takes over the whole tree an earlier attempt left.
 *
 * @throws Error when a command substitution fails or the run directory cannot be created.
 */
export async function prepareRunEnvironment(input: RunEnvironmentInput): Promise<RunEnvironment> {
  const runDir = runWorkDir(input.workDirBase, input.dag.name, input.dagRunId);
  const created = await mkdir(runDir, { recursive: true, mode: 0o700 });
  const identity = input.launcher.identity;
  let env: Record<string, string> = { ...input.processEnv };
  if (identity !== undefined) {
    // Created or not, the parents are passable but not listable (run-service's umask is 077).
    await chmod(dirname(runDir), 0o711);
    await chmod(input.workDirBase, 0o711);
    // Mode first: once the uid owns it, changing it would need CAP_FOWNER.
    await chmod(runDir, 0o700);
    if (created === undefined) await adoptTree(runDir, identity.uid, identity.gid);
    env = { ...env, HOME: runDir, TMPDIR: runDir, USER: identity.name, LOGNAME: identity.name };
  }
  await input.launcher.adopt(runDir);
  const substitution = { shell: input.shell, cwd: runDir, launcher: input.launcher };
  for (const entry of input.dag.env) {
    const expanded = applyEnvVars(env, [entry], (value, current) => expandVariables(value, (name) => current[name]));
    const value = expanded[entry.key] ?? '';
    env = { ...expanded, [entry.key]: await substituteCommands(value, { ...substitution, env: expanded }) };
  }
  // On top of the DAG's own env (022b); values are data, never expanded or substituted.
  env = { ...env, ...input.profileEnv };
  const params: RunParam[] = [];
  const paramMap = new Map<string, string>();
  for (const param of input.params) {
    let value = param.value;
    if (param.fromDefault && !input.paramsEvaluated) {
      // Backticks of the author's default run; earlier params reach them as variables, never as text.
      value = await substituteAuthorCommands(
        value,
        (segment) => expandVariables(segment, (name) => paramMap.get(name) ?? env[name]),
        { ...substitution, env: withExported(env, paramMap) },
      );
    }
    params.push({ ...param, value });
    paramMap.set(param.name, value);
  }
  const base = withExported(
    env,
    [...paramMap].filter(([name]) => isExportableName(name)),
  );
  const positional = params.filter((param) => /^\d+$/.test(param.name)).map((param) => param.value);
  const workDir =
    input.dag.workingDir === undefined
      ? runDir
      : resolveWorkingDir(input.dag.workingDir, runDir, (text) =>
          expandVariables(text, (name) => paramMap.get(name) ?? base[name]),
        );
  return { params, paramMap, positional, base, workDir };
}
