import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { StepCommand } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import { interpolateForShell, isPosixShell, type ShellText } from '../core/shell-values';
import type { RunContext, StepExecInput, StepExecResult, StepExecutor } from '../core/run-types';
import { runProcess, type ProcessOutcome } from '../process/process-runner';

/**
 * Command and script steps (dagu-model §3 `run` / `command` / `script`,
 * README "Steps"): each command is `<shell> [shell args] -c <line> <shell>
 * <positional params…>` in its own process group, in order, stopping at the
 * first failure; a legacy `command: [argv]` runs without a shell; a script is
 * written to the try's script file and run as `<shell|interpreter> file`.
 */

/** Characters of the last stderr line kept in a step's `error`. */
const MAX_ERROR_DETAIL = 500;

/** The error text of a process that did not succeed (Dagu's `exit status N`, plus the shell's last stderr line). */
function processError(outcome: ProcessOutcome, lastStderr: string, timeoutMs: number | undefined): string {
  if (outcome.timedOut) return `step timed out after ${(timeoutMs ?? 0) / 1000}s`;
  if (outcome.aborted) return 'aborted';
  if (outcome.spawnError !== undefined) return `failed to start: ${outcome.spawnError}`;
  if (outcome.exitCode === null) return `killed by signal ${outcome.signal ?? 'unknown'}`;
  return lastStderr === ''
    ? `exit status ${outcome.exitCode}`
    : `exit status ${outcome.exitCode}: ${lastStderr.slice(0, MAX_ERROR_DETAIL)}`;
}

/** One process to run: its argv and the generated value variables its text expands. */
interface PlannedRun {
  file: string;
  args: string[];
  vars: Readonly<Record<string, string>>;
}

/**
 * Text for the `shell` argv: a POSIX shell (also through `env`) gets values as variable expansions
 * (dagu-model §3); any other interpreter (python, node, …) cannot expand
 * `${NAME}`, so values go in as text, as the author's choice of language.
 */
function shellTextFor(shell: readonly string[], text: string, scope: InterpolationScope): ShellText {
  return isPosixShell(shell) ? interpolateForShell(text, scope) : { text: interpolate(text, scope, 'shell'), vars: {} };
}

function commandArgv(
  command: StepCommand,
  shellFile: string,
  shellArgs: readonly string[],
  scope: InterpolationScope,
  positional: readonly string[],
): PlannedRun {
  if (command.kind === 'exec') {
    // No shell runs: values are put in as text (dagu-model §3).
    const [file, ...args] = command.argv.map((arg) => interpolate(arg, scope, 'plain'));
    return { file: file ?? '', args, vars: {} };
  }
  // `sh -c <line> <$0> <$1> …`: positional params become the shell's $1, $2, ….
  const line = shellTextFor([shellFile, ...shellArgs], command.line, scope);
  return {
    file: shellFile,
    args: [...shellArgs, '-c', line.text, basename(shellFile), ...positional],
    vars: line.vars,
  };
}

/**
 * Runs the step's commands (or its script) as processes; the result of the
 * last one run is the try's. A step with no command succeeds (exit 0).
 */
export async function runShellBody(ctx: RunContext, input: StepExecInput): Promise<StepExecResult> {
  const { step } = input.node;
  const shell = step.shell ?? [ctx.config.defaultShell];
  const [shellFile, ...shellArgs] = shell;
  const positional = ctx.env.positional;
  const runs: PlannedRun[] = [];
  if (step.kind === 'script') {
    const [file, ...args] = step.interpreter ?? shell;
    const script = shellTextFor([file ?? ctx.config.defaultShell, ...args], step.script ?? '', input.scope);
    await writeFile(input.scriptFile, script.text, { mode: 0o700 });
    await ctx.launcher.adopt(input.scriptFile);
    runs.push({
      file: file ?? ctx.config.defaultShell,
      args: [...args, input.scriptFile, ...positional],
      vars: script.vars,
    });
  } else {
    for (const command of step.commands ?? [])
      runs.push(commandArgv(command, shellFile ?? ctx.config.defaultShell, shellArgs, input.scope, positional));
  }
  let last: StepExecResult = { ok: true, exitCode: 0, timedOut: false, aborted: false };
  for (const run of runs) {
    const outcome = await runProcess({
      file: run.file,
      args: run.args,
      cwd: input.cwd,
      env: { ...input.env, ...run.vars },
      launcher: ctx.launcher,
      signal: input.signal,
      timeoutMs: input.timeoutMs,
      killGraceMs: ctx.config.killGraceMs,
      trace: {
        name: `step ${input.node.name}`,
        attributes: {
          'dagu.dag.name': ctx.attempt.dagName,
          'dagu.run.id': ctx.attempt.dagRunId,
          'dagu.step.name': input.node.name,
          'dagu.attempt.no': ctx.attempt.attemptNo,
        },
      },
      onStdout: input.onStdout,
      onStderr: input.onStderr,
      backpressure: {
        get overloaded() {
          return ctx.sink.overloaded;
        },
        waitForRoom: () => {
          ctx.log(`output of ${input.node.name} paused: the log buffer is full until PostgreSQL catches up`);
          return ctx.sink.waitForRoom();
        },
      },
    });
    const ok = outcome.exitCode === 0 && !outcome.timedOut && !outcome.aborted;
    if (outcome.spawnError !== undefined) input.onStderr(`failed to start ${run.file}: ${outcome.spawnError}`);
    const exitCode = outcome.exitCode ?? undefined;
    last = ok
      ? { ok, exitCode, timedOut: false, aborted: false }
      : {
          ok,
          exitCode,
          error: processError(outcome, input.lastStderr(), input.timeoutMs),
          timedOut: outcome.timedOut,
          aborted: outcome.aborted,
        };
    if (!ok) break;
  }
  return last;
}

/** `command` and `script` steps. */
export const shellExecutor: StepExecutor = { publishesOutputs: true, run: runShellBody };
