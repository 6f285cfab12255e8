import type { Logger } from '@dagu-mcp/runtime';
import { diskUsageOf, freeBytesAt } from '../process/dir-usage';

/**
 * The disk rules of an attempt (docs/reliability.md
 * "Bounded disk"): a run starts only while its file system has
 * `RUN_MIN_FREE_BYTES` free (else it waits, saying why; queued runs stay
 * queued, {@link lowDiskReason}), and its run
 * directory may hold at most `RUN_DIR_MAX_BYTES` while it runs (measured every
 * `RUN_DIR_CHECK_MS`; past it the run fails with the reason).
 */

/**
 * Waits until `dir`'s file system has `minFreeBytes` free, checking every
 * `everyMs`; says once through `say` why it waits. Returns at once when the
 * bound is 0 or there is room, and when `signal` aborts (a stop or a shutdown).
 * A failing `statfs` counts as room (the run's own file system errors then tell).
 */
export async function waitForFreeSpace(opts: {
  dir: string;
  minFreeBytes: number;
  everyMs: number;
  signal: AbortSignal;
  say: (message: string) => void;
  logger: Logger;
}): Promise<void> {
  if (opts.minFreeBytes <= 0) return;
  let said = false;
  for (;;) {
    let free: number;
    try {
      free = await freeBytesAt(opts.dir);
    } catch {
      return;
    }
    if (free >= opts.minFreeBytes || opts.signal.aborted) {
      if (said) opts.say(`free space is back (${free} bytes): the run goes on`);
      return;
    }
    if (!said) {
      said = true;
      const reason = lowDiskMessage(free, opts.minFreeBytes);
      opts.say(reason);
      opts.logger.warn({ free, minFreeBytes: opts.minFreeBytes }, 'run waits for free disk space');
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, opts.everyMs);
      function done(): void {
        clearTimeout(timer);
        opts.signal.removeEventListener('abort', done);
        resolve();
      }
      opts.signal.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * Why no run should start now, or undefined: the file system of `dir` has less than
 * `minFreeBytes` free (0: never). A failing `statfs` gives undefined.
 */
export async function lowDiskReason(dir: string, minFreeBytes: number): Promise<string | undefined> {
  if (minFreeBytes <= 0) return undefined;
  try {
    const free = await freeBytesAt(dir);
    return free < minFreeBytes ? lowDiskMessage(free, minFreeBytes) : undefined;
  } catch {
    return undefined;
  }
}

function lowDiskMessage(free: number, minFreeBytes: number): string {
  return `waiting for disk space: ${free} bytes free where runs work, below RUN_MIN_FREE_BYTES (${minFreeBytes})`;
}

/**
 * Measures `dir` every `everyMs` until stopped; calls `onOver(bytes)` once,
 * the first time it holds more than `maxBytes`, and stops measuring. A failed
 * measure (the directory not there yet, or gone) is skipped.
 *
 * @returns the function that stops the watch
 */
export function watchDirSize(opts: {
  dir: string;
  maxBytes: number;
  everyMs: number;
  onOver: (bytes: number) => void;
}): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    let bytes: number | undefined;
    try {
      bytes = await diskUsageOf(opts.dir);
    } catch {
      bytes = undefined;
    }
    if (stopped) return;
    if (bytes !== undefined && bytes > opts.maxBytes) {
      stopped = true;
      opts.onOver(bytes);
      return;
    }
    timer = setTimeout(() => void tick(), opts.everyMs);
  };
  timer = setTimeout(() => void tick(), opts.everyMs);
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
