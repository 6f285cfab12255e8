import { execFile } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Disk a directory tree takes (docs/reliability.md "Bounded
 * disk"): `du -s -x -B1`, the blocks really allocated (a sparse file counts
 * what it holds, not its length), this file system only. Run as a separate
 * process so a large tree never blocks run-service's thread.
 *
 * @returns bytes
 * @throws Error when `du` fails (the directory is gone)
 */
export async function diskUsageOf(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-s', '-x', '-B1', '--', dir], { env: { PATH: '/usr/bin:/bin' } });
  const bytes = Number(stdout.split(/\s/, 1)[0]);
  if (!Number.isFinite(bytes)) throw new Error(`du gave no size for ${dir}`);
  return bytes;
}

/**
 * Free bytes an unprivileged process may still use on the file system of `path`
 * (its nearest existing ancestor when it does not exist yet): `statfs` blocks
 * available × block size.
 *
 * @throws Error when no ancestor can be read
 */
export async function freeBytesAt(path: string): Promise<number> {
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = await statfs(at);
      return stats.bavail * stats.bsize;
    } catch (error) {
      if (dirname(at) === at) throw error;
    }
  }
}
