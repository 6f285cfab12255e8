import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { DIRECT_LAUNCHER, type StepIdentity, type StepLauncher } from '../core/step-launch';

/**
 * The one way a user's code starts (docs/security.md "Step isolation and
 * secrets at rest"): step commands, scripts, precondition commands and
 * backtick substitutions all run through {@link StepLauncher.wrap}.
 *
 * With a step user (`RUN_STEP_USER`) every process is started as
 * `setpriv --reuid <uid> --regid <gid> --clear-groups --no-new-privs
 * --pdeathsig SIGKILL -- <file> <args…>` (util-linux): another Unix user
 * without supplementary groups, unable to gain privileges through set-user-ID
 * files, killed when run-service dies. That user cannot read
 * `/proc/<run-service>/environ` nor run-service's files. Without a step user
 * (a developer laptop) only the parent-death signal is set, when `setpriv`
 * is installed.
 */

/**
 * Looks `name` up in the password database (`getent passwd`).
 *
 * @throws Error `RUN_STEP_USER=<name>: no such user …` when it does not exist
 */
export function resolveStepIdentity(name: string): StepIdentity {
  let line: string;
  try {
    line = execFileSync('getent', ['passwd', name], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      `RUN_STEP_USER=${name}: no such user on this machine (create it: useradd --system ${name}; ` +
        'or unset RUN_STEP_USER to run steps as run-service itself on a developer machine)',
    );
  }
  const [, , uid, gid, , home] = line.split(':');
  if (uid === undefined || gid === undefined) throw new Error(`RUN_STEP_USER=${name}: unreadable passwd entry`);
  if (Number(uid) === 0) throw new Error(`RUN_STEP_USER=${name}: is root; steps must run as an unprivileged user`);
  return { name, uid: Number(uid), gid: Number(gid), home: home === undefined || home === '' ? '/' : home };
}

/** The first executable `setpriv` on `path` (a `PATH` value), if any. */
export function findSetpriv(path: string): string | undefined {
  return findOnPath(path, 'setpriv');
}

/** The first executable `name` on `path` (a `PATH` value), if any (`setpriv`, `prlimit`). */
export function findOnPath(path: string, name: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

/**
 * Builds the launcher of this replica.
 *
 * @param opts.identity the step user (`RUN_STEP_USER`), resolved
 * @param opts.setpriv  path of util-linux `setpriv`; required with a step user
 * @param opts.ownUid   run-service's uid (`process.getuid()`)
 * @throws Error when a step user is set but `setpriv` is missing or run-service cannot switch users
 */
export function createStepLauncher(opts: {
  identity: StepIdentity | undefined;
  setpriv: string | undefined;
  ownUid: number;
}): StepLauncher {
  const { identity, setpriv } = opts;
  if (identity === undefined) {
    if (setpriv === undefined) return DIRECT_LAUNCHER;
    return {
      wrap: (file, args) => ({ file: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', file, ...args] }),
      adopt: () => Promise.resolve(),
      shareDir: () => Promise.resolve(),
    };
  }
  if (setpriv === undefined) {
    throw new Error(
      `RUN_STEP_USER=${identity.name}: util-linux setpriv is not installed; it switches steps to that user`,
    );
  }
  if (opts.ownUid !== 0 && opts.ownUid !== identity.uid) {
    throw new Error(
      `RUN_STEP_USER=${identity.name}: run-service runs as uid ${opts.ownUid} and cannot switch users; ` +
        'run it as root with only the capabilities SETUID, SETGID, KILL, CHOWN, FOWNER, DAC_OVERRIDE (docs/deployment.md)',
    );
  }
  const prefix = [
    '--reuid',
    String(identity.uid),
    '--regid',
    String(identity.gid),
    '--clear-groups',
    '--no-new-privs',
    '--pdeathsig',
    'SIGKILL',
    '--',
  ];
  return {
    identity,
    wrap: (file, args) => ({ file: setpriv, args: [...prefix, file, ...args] }),
    adopt: (path) => chown(path, identity.uid, identity.gid),
    shareDir: (path) => chmod(path, 0o711),
  };
}
