/**
 * The byte bound of a log read (log reads in bytes as well as lines; `RUN_LOG_READ_MAX_BYTES`). A
 * line-count window alone lets one 3 MB line, or ten thousand long ones, fill
 * a bus reply.
 */

/** Default bound of one stream in a log read, UTF-8 bytes (1 MiB). */
export const DEFAULT_LOG_READ_MAX_BYTES = 1024 * 1024;

/** Lines kept within a byte bound, and whether anything was cut. */
export interface BoundedLines {
  readonly lines: string[];
  readonly truncated: boolean;
}

/**
 * Keeps as many of `lines` as fit in `maxBytes` of UTF-8, counting the `\n`
 * that joins them. From the start for head and range reads; from the end for
 * tail reads (`fromEnd`), which keep the newest lines. The first line that
 * does not fit is cut at a character boundary (its start kept, or its end
 * when `fromEnd`) and nothing beyond it is kept.
 */
export function boundLines(lines: readonly string[], maxBytes: number, fromEnd: boolean): BoundedLines {
  const order = fromEnd ? [...lines].reverse() : lines;
  const kept: string[] = [];
  let budget = maxBytes;
  for (const line of order) {
    const joiner = kept.length > 0 ? 1 : 0;
    const bytes = Buffer.byteLength(line) + joiner;
    if (bytes <= budget) {
      kept.push(line);
      budget -= bytes;
      continue;
    }
    const room = budget - joiner;
    if (room > 0) kept.push(cutUtf8(line, room, fromEnd));
    return { lines: fromEnd ? kept.reverse() : kept, truncated: true };
  }
  return { lines: fromEnd ? kept.reverse() : kept, truncated: false };
}

/** At most `room` bytes of `line` — its start, or its end when `keepEnd` — never splitting a character. */
function cutUtf8(line: string, room: number, keepEnd: boolean): string {
  const bytes = Buffer.from(line, 'utf8');
  const isContinuation = (at: number): boolean => ((bytes[at] ?? 0) & 0xc0) === 0x80;
  if (keepEnd) {
    let start = bytes.length - room;
    while (start < bytes.length && isContinuation(start)) start += 1;
    return bytes.subarray(start).toString('utf8');
  }
  let end = room;
  while (end > 0 && isContinuation(end)) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}
