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
   * (`process/step-group-registry.ts`, issue 18 item 6); absent: not recorded.
   */
  readonly groups?: StepGroupTracker;
  /**
   * Starts step processes as the step user, with no new privileges
   * (`process/spawner/`, docs/decisions.md "Steps start from a small spawner
   * process"): the process runner gives it the plain argv, not `wrap`'s.
   * Absent: `child_process.spawn` of the wrapped argv in run-service itself.
   */
  readonly spawner?: StepSpawner;
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
  spawn(file: string, args: readonly string[], opts: { cwd: string; env: Readonly<Record<string, string>> }): StepChild;
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
