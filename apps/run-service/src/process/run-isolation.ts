import { execFile } from 'node:child_process';
import { chmod, chown, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type {
  RunIsolation,
  SpawnAs,
  StepGroupTracker,
  StepLauncher,
  StepLimits,
  StepSpawner,
} from '../core/step-launch';
import { UidPool } from '../core/uid-pool';

const run = promisify(execFile);

/**
 * A uid per run (docs/security.md "A uid per run"). Every process
 * of a run — steps, scripts, command checks, backtick substitutions, handlers
 * — runs as a uid of `RUN_STEP_UID_RANGE` that no other active run of this
 * replica holds, with `umask 077` and the run's limits; so one run cannot
 * read or write another's directory or temp files, and `RLIMIT_NPROC`
 * (counted per uid) is a per-run process limit. Numeric uids need no
 * password entry; the group is the uid's number too.
 *
 * When a run ends, {@link RunIsolation.release} kills whatever still runs as
 * its uid (a background process that left the step's process group), removes
 * the uid's files from the shared temp directory (`/tmp`), hands the run
 * directory back to run-service (mode 0700: kept for retention and workbook
 * reads, closed to every later run that may get the same uid) and frees the uid.
 *
 * `RUN_STEP_USER` is a one-uid range shared by every run: the same launcher,
 * but no per-run kill or temp clean-up (they would hit the other runs).
 */

/** What {@link createIsolatingLauncher} needs. */
export interface IsolationOptions {
  /** The uids, inclusive. */
  readonly first: number;
  readonly last: number;
  /** Group of every uid; default: the uid's own number. */
  readonly gid?: number;
  /** Limits of each step process (RLIMIT_NPROC counts the whole run's processes). */
  readonly limits: StepLimits;
  /** util-linux `setpriv` (required). */
  readonly setpriv: string;
  /** util-linux `prlimit`; required when a limit is set. */
  readonly prlimit?: string;
  /** run-service's uid and gid: a run directory goes back to them when the run ends. */
  readonly ownUid: number;
  readonly ownGid: number;
  /** The temp directories steps share (`/tmp`, `/var/tmp`, `/dev/shm`), cleaned of an exclusive uid's files at the run's end. */
  readonly sharedTmp: readonly string[];
  readonly groups?: StepGroupTracker;
  /** The native spawner (without one, processes start through `wrap`). */
  readonly spawner?: StepSpawner;
  /** Name of the shared uid's user (`RUN_STEP_USER`), when the range is that one uid. */
  readonly userName?: string;
}

/** The umask of every step process: files and directories private to the run's uid. */
export const STEP_UMASK = 0o077;

/**
 * Builds the replica's launcher: one that starts nothing itself but gives
 * each run a launcher of its own ({@link StepLauncher.isolateRun}).
 *
 * @throws Error when a limit is set but `prlimit` is missing, or run-service is not root (it must switch uids)
 */
export function createIsolatingLauncher(opts: IsolationOptions): StepLauncher {
  const hasLimits = Object.values(opts.limits).some((v) => v !== undefined);
  if (hasLimits && opts.prlimit === undefined)
    throw new Error('util-linux prlimit is not installed; it sets the step limits when the spawner is off');
  const shared = opts.first === opts.last;
  if (opts.ownUid !== 0 && !(shared && opts.ownUid === opts.first))
    throw new Error(
      `run-service runs as uid ${opts.ownUid} and cannot switch steps to the uids ${opts.first}-${opts.last}; ` +
        'run it as root with the capabilities SETUID, SETGID, KILL, CHOWN, FOWNER, DAC_OVERRIDE (docs/deployment.md)',
    );
  const pool = new UidPool(opts.first, opts.last);
  const refuse = (): never => {
    throw new Error("a step process started outside a run's launcher (isolateRun)");
  };
  return {
    identity: {
      name: opts.userName ?? `uids ${opts.first}-${opts.last}`,
      uid: opts.first,
      gid: opts.gid ?? opts.first,
      home: '/',
    },
    wrap: refuse,
    adopt: refuse,
    shareDir: refuse,
    ...(opts.groups !== undefined ? { groups: opts.groups } : {}),
    isolateRun: () => isolate(pool.acquire(), !shared, pool, opts),
  };
}

function isolate(uid: number, exclusive: boolean, pool: UidPool, opts: IsolationOptions): RunIsolation {
  const gid = opts.gid ?? uid;
  const as: SpawnAs = { uid, gid, umask: STEP_UMASK, limits: opts.limits };
  const setprivArgs = ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--no-new-privs'];
  const limitArgs = prlimitArgs(opts.limits);
  const spawner = opts.spawner;
  const launcher: StepLauncher = {
    identity: { name: opts.userName ?? `dagu-run-${uid}`, uid, gid, home: '/' },
    // setpriv sets no umask: a shell sets it and execs the command (this path only: backticks, spawner off).
    wrap: (file, args) => ({
      file: opts.setpriv,
      args: [
        ...setprivArgs,
        '--pdeathsig',
        'SIGKILL',
        '--',
        ...(limitArgs.length > 0 && opts.prlimit !== undefined ? [opts.prlimit, ...limitArgs, '--'] : []),
        '/bin/sh',
        '-c',
        `umask ${STEP_UMASK.toString(8).padStart(3, '0')} && exec "$0" "$@"`,
        file,
        ...args,
      ],
    }),
    adopt: (path) => chown(path, uid, gid),
    shareDir: (path) => chmod(path, 0o711),
    ...(opts.groups !== undefined ? { groups: opts.groups } : {}),
    ...(spawner !== undefined
      ? { spawner: { spawn: (file, args, o) => spawner.spawn(file, args, { ...o, as }) } }
      : {}),
  };
  let released = false;
  return {
    launcher,
    uid,
    exclusive,
    release: async (runDir) => {
      if (released) return;
      released = true;
      try {
        if (exclusive) {
          await killAllOf(opts.setpriv, setprivArgs);
          await Promise.all(opts.sharedTmp.map((dir) => removeFilesOf(dir, uid)));
        }
        if (runDir !== undefined) await sealDir(runDir, opts.ownUid, opts.ownGid);
      } finally {
        pool.release(uid);
      }
    },
  };
}

/** `prlimit` options setting each limit as soft and hard. */
function prlimitArgs(limits: StepLimits): string[] {
  const out: string[] = [];
  if (limits.maxProcesses !== undefined) out.push(`--nproc=${limits.maxProcesses}`);
  if (limits.maxAddressBytes !== undefined) out.push(`--as=${limits.maxAddressBytes}`);
  if (limits.maxCpuSeconds !== undefined) out.push(`--cpu=${limits.maxCpuSeconds}`);
  if (limits.maxFileBytes !== undefined) out.push(`--fsize=${limits.maxFileBytes}`);
  return out;
}

/**
 * Kills every process of the uid: `kill(-1)` from a shell running as it signals all
 * the uid's processes but itself. Three passes catch what a fork storm started
 * while the first ran. Never rejects.
 */
async function killAllOf(setpriv: string, setprivArgs: readonly string[]): Promise<void> {
  try {
    // The uid is checked again inside: `kill -1` as root would reach every process of the machine.
    const script = 'case "$(id -u)" in 0) exit 1 ;; esac; kill -9 -1; kill -9 -1; kill -9 -1';
    await run(setpriv, [...setprivArgs, '--', '/bin/sh', '-c', script], {
      env: { PATH: '/usr/bin:/bin' },
    });
  } catch {
    // "No such process" when nothing was left: the usual case.
  }
}

/** Removes the entries of `dir` owned by `uid` (top level; recursively). Never rejects. */
async function removeFilesOf(dir: string, uid: number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names.map(async (name) => {
      const path = join(dir, name);
      try {
        if ((await lstat(path)).uid === uid) await rm(path, { recursive: true, force: true });
      } catch {
        // Gone already, or not ours to judge.
      }
    }),
  );
}

/** Gives the run directory back to run-service, mode 0700. Never rejects. */
async function sealDir(dir: string, uid: number, gid: number): Promise<void> {
  try {
    await chown(dir, uid, gid);
    await chmod(dir, 0o700);
  } catch {
    // The directory is gone (a run that never made it), or cannot be changed: retention removes it.
  }
}

/**
 * Gives a whole directory tree to `uid:gid` (a retry's new uid takes over what
 * the earlier attempt left; symbolic links themselves, never their targets).
 *
 * @throws Error when `chown -R` fails
 */
export async function adoptTree(dir: string, uid: number, gid: number): Promise<void> {
  await run('chown', ['-R', '-P', '-h', `${uid}:${gid}`, dir], { env: { PATH: '/usr/bin:/bin' } });
}
