import type { Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { CHUNK_BYTES, CHUNK_LINES } from './log-sink';
import { boundLines, DEFAULT_LOG_READ_MAX_BYTES } from '../core/log-bytes';
import { hasMoreOf, windowOf, windowSize, type LineWindow, type LogSelection } from '../core/log-window';

/**
 * Reads stored log lines (dagu-model §6). A stream's `totalLines` is its
 * counter row; the selected lines come from one range scan of the
 * `log_chunks` primary key — the chunks overlapping the window (a chunk holds
 * at most {@link CHUNK_LINES} lines, so the chunk holding the window's first
 * line starts after `from − CHUNK_LINES`) — so reading the tail or any window
 * of a huge log costs about the same as reading a small one.
 */

/** One stream read with a selection: the 021 step-log / scheduler-log fields. */
export type StreamRead = {
  /** The selected lines joined with `\n` (no trailing newline). */
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
  /** Present when the read was cut at its byte bound (`RUN_LOG_READ_MAX_BYTES`). */
  truncated?: true;
};

const TotalsRowSchema = z.object({ id: z.coerce.number(), total_lines: z.number() });
const ChunkRowSchema = z.object({ first_line: z.number().int(), line_count: z.number().int(), text: z.string() });

/** The exact line counts of `streamIds` (a missing id counts 0). */
export async function readStreamTotals(pool: Pool, streamIds: readonly number[]): Promise<Map<number, number>> {
  const totals = new Map<number, number>();
  if (streamIds.length === 0) return totals;
  const result = await pool.query('SELECT id, total_lines FROM log_streams WHERE id = ANY($1::bigint[])', [streamIds]);
  for (const row of result.rows) {
    const parsed = TotalsRowSchema.parse(row);
    totals.set(parsed.id, parsed.total_lines);
  }
  return totals;
}

/**
 * Lines `window.from` … `window.to` of one stream, in order. Each chunk's text
 * is fetched up to `maxChars` characters (at least {@link CHUNK_BYTES} + 1): a
 * chunk longer than that holds one huge line at its end (the sink closes a
 * chunk once it reaches {@link CHUNK_BYTES}), which comes back cut instead of
 * whole.
 */
export async function readLines(
  pool: Pool,
  streamId: number,
  window: LineWindow,
  maxChars = DEFAULT_LOG_READ_MAX_BYTES,
): Promise<string[]> {
  if (windowSize(window) === 0) return [];
  const result = await pool.query(
    `SELECT first_line, line_count, left(text, $4) AS text FROM log_chunks
     WHERE stream_id = $1 AND first_line > $2 - ${CHUNK_LINES} AND first_line <= $3 AND first_line + line_count > $2
     ORDER BY first_line`,
    [streamId, window.from, window.to, Math.max(maxChars, CHUNK_BYTES) + 1],
  );
  const lines: string[] = [];
  for (const row of result.rows) {
    const chunk = ChunkRowSchema.parse(row);
    const chunkLines = chunk.text.split('\n');
    const from = Math.max(window.from, chunk.first_line) - chunk.first_line;
    const to = Math.min(window.to, chunk.first_line + chunk.line_count - 1) - chunk.first_line;
    for (let i = from; i <= to; i++) lines.push(chunkLines[i] ?? '');
  }
  return lines;
}

/**
 * Reads `selection` of a stream whose total is known, at most `maxBytes` of
 * UTF-8 content (the newest lines for a tail). A cut read has
 * `truncated: true` and `hasMore: true`; `lineCount` counts the lines
 * returned, a cut line included.
 */
export async function readWithTotal(
  pool: Pool,
  streamId: number,
  total: number,
  selection: LogSelection,
  maxBytes = DEFAULT_LOG_READ_MAX_BYTES,
): Promise<StreamRead> {
  const read = await readLines(pool, streamId, windowOf(selection, total), maxBytes);
  const { lines, truncated } = boundLines(read, maxBytes, selection.kind === 'tail');
  return {
    content: lines.join('\n'),
    lineCount: lines.length,
    totalLines: total,
    hasMore: truncated || hasMoreOf(selection, total, lines.length),
    ...(truncated ? { truncated: true as const } : {}),
  };
}

/** Reads `selection` of one stream (its total, then its lines). */
export async function readStream(pool: Pool, streamId: number, selection: LogSelection): Promise<StreamRead> {
  const totals = await readStreamTotals(pool, [streamId]);
  return readWithTotal(pool, streamId, totals.get(streamId) ?? 0, selection);
}

/** An empty read (a stream the query excluded). */
export function emptyRead(): StreamRead {
  return { content: '', lineCount: 0, totalLines: 0, hasMore: false };
}
