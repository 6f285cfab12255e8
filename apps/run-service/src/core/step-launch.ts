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
  /** The argv that starts `file args` as the step user. */
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
