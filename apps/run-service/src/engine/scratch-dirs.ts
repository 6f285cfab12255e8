import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Scratch directories of attempts (a step's output file, a script step's
 * script). Each attempt gets its own directory, named with 72 random bits,
 * under one base directory this process creates on first use
 * (`<root>/dagu-run-XXXXXX`, the root being `RUN_PRIVATE_DIR` once
 * {@link useScratchRoot} was called, else `os.tmpdir()`; out of the
 * steps' `/tmp`), mode 0711: a step user can reach a file
 * whose name it was given, but cannot list what is there), and removes
 * when it exits (a killed process leaves it in tmpdir(), as a killed
 * attempt always left its directory).
 *
 * Synchronous on purpose: these are single system calls on local
 * disk, where `fs/promises` spent a thread-pool round trip on each, and
 * `rm -r` an `lstat`, a `readdir` and an `rmdir`; together about 5 % of
 * run-service's time in a burst of one-step runs.
 */
let base: string | undefined;
let root: string | undefined;
let exitHooked = false;

/**
 * Puts later bases under `dir` (run-service's private directory, `RUN_PRIVATE_DIR`,
 * which must exist and be passable by steps: mode 0711). A base made already stays.
 */
export function useScratchRoot(dir: string): void {
  root = dir;
}

/**
 * Creates a fresh, empty scratch directory for one attempt (mode 0700; the
 * launcher shares it with the step user).
 *
 * @returns its absolute path
 * @throws Error from the file system (no space, no `tmpdir()`)
 */
export function createScratchDir(): string {
  try {
    return makeDirIn(baseDir());
  } catch (error) {
    // The base was removed under us (a tmp cleaner, an operator): make a new one, once.
    // Not `instanceof Error`: errors of node:fs may come from another realm (a test runner's).
    if (!(typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT')) throw error;
    base = undefined;
    return makeDirIn(baseDir());
  }
}

/** One attempt's directory in `parent`: a 72-bit random name, mode 0700. */
function makeDirIn(parent: string): string {
  const dir = join(parent, randomBytes(9).toString('base64url'));
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

function baseDir(): string {
  if (base === undefined) {
    const made = mkdtempSync(join(root ?? tmpdir(), 'dagu-run-'));
    chmodSync(made, 0o711);
    if (!exitHooked) {
      // One base per process (every engine of the process shares it): removed when the process exits.
      process.once('exit', removeScratchBase);
      exitHooked = true;
    }
    base = made;
  }
  return base;
}

/**
 * Removes an attempt's scratch directory. Each try deletes its own files, so
 * the directory is normally empty (one `rmdir`); anything left behind (a step
 * that wrote files of its own there) is removed recursively. Never throws.
 */
export function removeScratchDir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Best effort: a directory that cannot be removed is left in tmpdir(), as before.
    }
  }
}

/** Removes the base directory and whatever is in it (at process exit). Never throws. */
export function removeScratchBase(): void {
  if (base === undefined) return;
  try {
    rmSync(base, { recursive: true, force: true });
  } catch {
    // Best effort.
  }
  base = undefined;
}
