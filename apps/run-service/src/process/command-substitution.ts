import { execFile } from 'node:child_process';
import type { StepLauncher } from '../core/step-launch';

/**
 * Backtick command substitution in DAG `env` values and param defaults
 * (legacy Dagu: ``TODAY: "`date +%Y%m%d`"``). Each `` `cmd` `` is run by the
 * shell in the run's working directory with the environment built so far;
 * its stdout, without trailing newlines, replaces it. Step commands never go
 * through this: their backticks belong to the shell (Dagu spec 013).
 */

/** Where a substitution runs. */
export interface SubstitutionContext {
  /** Shell binary, run as `<shell> -c <cmd>`. */
  shell: string;
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** Runs the command as the step user: it is the DAG author's code. */
  launcher: StepLauncher;
  /** Per command; default 30 s. */
  timeoutMs?: number;
}

const BACKTICKS = /`([^`]*)`/g;

/** Runs one command and resolves its stdout without trailing newlines; rejects with the shell's message. */
export function runCommandCapture(command: string, context: SubstitutionContext): Promise<string> {
  return new Promise((resolve, reject) => {
    const launch = context.launcher.wrap(context.shell, ['-c', command]);
    execFile(
      launch.file,
      launch.args,
      { env: { ...context.env }, cwd: context.cwd, timeout: context.timeoutMs ?? 30_000, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) {
          const detail = String(stderr).trim() || error.message;
          reject(new Error(`command substitution \`${command}\` failed: ${detail}`));
          return;
        }
        resolve(String(stdout).replace(/\n+$/, ''));
      },
    );
  });
}

/** True when `text` has a backtick substitution. */
export function hasCommandSubstitution(text: string): boolean {
  return /`[^`]*`/.test(text);
}

/**
 * Replaces every `` `cmd` `` in `text` by the command's output.
 *
 * @throws Error naming the command and the shell's message when one fails.
 */
export async function substituteCommands(text: string, context: SubstitutionContext): Promise<string> {
  if (!hasCommandSubstitution(text)) return text;
  const commands = [...text.matchAll(BACKTICKS)].map((match) => match[1] ?? '');
  const outputs: string[] = [];
  for (const command of commands) outputs.push(command.trim() === '' ? '' : await runCommandCapture(command, context));
  let index = 0;
  return text.replace(BACKTICKS, () => outputs[index++] ?? '');
}

/**
 * Param defaults (dagu-model §3 "Values never become shell code"): `expand`
 * interpolates the author's text outside backticks; each `` `cmd` `` the
 * author wrote runs as written, its `${params.X}` / `${env.X}` turned into
 * `${X}` for the shell to expand from `context.env` (where earlier params
 * are exported). A value — a run param the caller gave — is never pasted
 * into a command, so its backticks or `$(…)` stay characters.
 *
 * @throws Error naming the command and the shell's message when one fails.
 */
export async function substituteAuthorCommands(
  text: string,
  expand: (segment: string) => string,
  context: SubstitutionContext,
): Promise<string> {
  if (!hasCommandSubstitution(text)) return expand(text);
  let out = '';
  let last = 0;
  for (const match of text.matchAll(BACKTICKS)) {
    out += expand(text.slice(last, match.index));
    const command = (match[1] ?? '').replace(/\$\{(?:params|env)\.([A-Za-z_][A-Za-z0-9_]*)\}/g, '${$1}');
    out += command.trim() === '' ? '' : await runCommandCapture(command, context);
    last = match.index + match[0].length;
  }
  return out + expand(text.slice(last));
}
