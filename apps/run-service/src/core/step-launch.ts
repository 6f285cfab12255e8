/**
 * What starts a user's code (the shapes, and the direct launcher; the real one is
 * `process/step-launcher.ts`, docs/security.md "Step isolation and secrets at
 * rest").
 */

/** The Unix identity steps run as. */
export interface StepIdentity {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  /** Home directory from the password database (`HOME` of the steps). */
  readonly home: string;
}

/**
 * Resource limits of a step's processes, each set as soft and hard
 * limit before the switch to the run's uid, so the step cannot raise them.
 */
export interface StepLimits {
  /** RLIMIT_NPROC: processes (threads count too) of the uid, hence of the run (`RUN_STEP_MAX_PROCESSES`). */
  readonly maxProcesses?: number;
  /** RLIMIT_AS: bytes of address space of each process (`RUN_STEP_MAX_ADDRESS_BYTES`). */
  readonly maxAddressBytes?: number;
  /** RLIMIT_CPU: CPU seconds of each process (`RUN_STEP_MAX_CPU_SECONDS`). */
  readonly maxCpuSeconds?: number;
  /** RLIMIT_FSIZE: bytes of any one file a process writes (`RUN_DIR_MAX_BYTES`). */
  readonly maxFileBytes?: number;
}

/** Who a spawned process runs as (a uid per run): ids, umask and limits, applied between fork and exec. */
export interface SpawnAs {
  readonly uid: number;
  readonly gid: number;
  /** File mode creation mask, e.g. `0o077`. */
  readonly umask: number;
  readonly limits: StepLimits;
}

/** Starts user code as the step user. */
export interface StepLauncher {
  /** The step user; undefined when steps run as run-service's own user. */
  readonly identity?: StepIdentity;
  /** The argv that starts `file args` as the step user (for a process not started by {@link spawner}). */
  wrap(file: string, args: readonly string[]): { file: string; args: string[] };
  /** Gives a file or directory run-service created to the step user (a run's working directory, an output file, a script); no-op without one. */
  adopt(path: string): Promise<void>;
  /**
   * Lets the step user pass through a directory run-service keeps (an
   * attempt's scratch directory: mode 0711, so the step opens the files given
   * to it there but can neither list nor add entries, e.g. a symbolic link
   * where run-service will read a step's outputs); no-op without one.
   */
  shareDir(path: string): Promise<void>;
  /**
   * Told of every step process group as it starts and as its leader ends, so a
   * restart can kill the groups a killed replica left behind
   * (`process/step-group-registry.ts`); absent: not recorded.
   */
  readonly groups?: StepGroupTracker;
  /**
   * Starts step processes as the step user, with no new privileges
   * (`process/spawner/`, docs/decisions.md "Steps start from a small spawner
   * process"): the process runner gives it the plain argv, not `wrap`'s.
   * Absent: `child_process.spawn` of the wrapped argv in run-service itself.
   */
  readonly spawner?: StepSpawner;
  /**
   * A launcher of its own for one run (`process/run-isolation.ts`):
   * the run's uid, limits and cleanup. Absent: every run uses this launcher.
   *
   * @throws Error when no uid of the range is free
   */
  isolateRun?(): RunIsolation;
}

/** One run's isolation: its launcher, and what ends it. */
export interface RunIsolation {
  /** Starts every process of the run as the run's uid. */
  readonly launcher: StepLauncher;
  /** The run's uid. */
  readonly uid: number;
  /** Whether the uid is the run's alone (false: one shared uid, `RUN_STEP_USER`). */
  readonly exclusive: boolean;
  /**
   * Ends the run's isolation: kills every process left with the run's uid (exclusive uids only),
   * removes its files from the shared temp directory, seals `runDir` (owned by run-service again, 0700)
   * and frees the uid. Never rejects.
   */
  release(runDir: string | undefined): Promise<void>;
}

/**
 * A started step process, as the process runner sees it.
 */
export interface StepChild {
  /** The process's pid (and process group id); undefined until started, or when it could not start. */
  readonly pid: number | undefined;
  /**
   * Subscribes to the child's life: `started` (pid known), `output` (a chunk
   * of stdout, fd 1, or stderr, fd 2), `exit` (the process ended, pipes may
   * still be open), `close` (exited and both pipes closed), or `error` alone
   * when it could not start. Called once, right after the start.
   */
  watch(listener: StepChildListener): void;
  /** Stop / restart reading the pipes (backpressure from the log buffer). */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
  /** Closes both pipes now (their later output is lost). */
  closePipes(): void;
}

/** What {@link StepChild.watch} reports. */
export interface StepChildListener {
  started(): void;
  output(fd: 1 | 2, chunk: Buffer): void;
  exit(): void;
  close(code: number | null, signal: string | null): void;
  error(message: string): void;
}

/** Starts one process detached (leading its own process group), stdin ignored, stdout and stderr piped. */
export interface StepSpawner {
  spawn(file: string, args: readonly string[], opts: SpawnOptions): StepChild;
}

/** Where and how {@link StepSpawner.spawn} starts a process; `as` absent: as the spawner's own identity. */
export interface SpawnOptions {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly as?: SpawnAs;
}

/** Receives step process group starts and ends (group id = the leader's pid). */
export interface StepGroupTracker {
  started(pgid: number): void;
  ended(pgid: number): void;
}

/** A launcher that starts processes as they are (unit tests, machines without util-linux). */
export const DIRECT_LAUNCHER: StepLauncher = {
  wrap: (file, args) => ({ file, args: [...args] }),
  adopt: () => Promise.resolve(),
  shareDir: () => Promise.resolve(),
};
