import type { Logger, Pool } from '@dagu-mcp/runtime';
import { isTransientPgFailure } from '@dagu-mcp/runtime';
import type { LogBackpressure, LogStreamWriter } from '../core/run-types';
import { LogSpill, type SpilledChunk } from './log-spill';
import { outageBackoffMs } from './outage-retry';

/**
 * Buffered, batched writes of log lines to PostgreSQL (docs/architecture.md "logs
 * are stored so that any replica can read them"; dagu-model §6).
 *
 * One sink per running attempt. `append` is synchronous and cheap: it numbers
 * the line and buffers it, so a step producing output never waits for the
 * database. The buffer is written when it holds `batchLines` lines or
 * `flushMs` after its first line, whichever comes first: each stream's
 * pending lines become chunks (`log_chunks`, at most {@link CHUNK_LINES}
 * lines and about {@link CHUNK_BYTES}), all written by one INSERT (`unnest`
 * of arrays) that also advances each stream's counter row
 * (`log_streams.total_lines`) in the same statement — readers never see a
 * counter ahead of its lines. One write is in flight at a time, so chunks
 * commit in line order; while one is in flight the buffer grows (a statement
 * takes up to {@link MAX_STATEMENT_BYTES}), which is how the sink keeps up
 * with a fast producer.
 *
 * Backpressure: past `maxPendingBytes` of buffered text {@link LogSink.overloaded}
 * is true and producers may wait on {@link LogSink.waitForRoom} (the process
 * runner pauses the child's pipes, which blocks the child only in that case).
 *
 * PostgreSQL outages: a write that fails because PostgreSQL
 * is unavailable is kept and tried again (`store/outage-retry.ts` backoff)
 * for up to `outageMaxMs`, while steps go on appending. Past
 * `spillAfterBytes` of text in memory the pending chunks move to a file in
 * `spillDir` (`store/log-spill.ts`, at most `spillMaxBytes`); once a write
 * succeeds the spilled batches are written back, oldest first, then the
 * memory buffer: line order holds. Past both bounds the backpressure above
 * pauses the steps. Only after `outageMaxMs` of failures are lines dropped
 * (logged with their count); any other failure is tried {@link MAX_WRITE_FAILURES} times.
 */

/** Lines per chunk row at most (the `log_chunks.line_count` check). */
export const CHUNK_LINES = 1000;
/** A chunk is closed once its text reaches this many bytes (a longer single line gets a chunk of its own). */
export const CHUNK_BYTES = 256 * 1024;
/** Bytes of log text one INSERT carries at most. */
export const MAX_STATEMENT_BYTES = 8 * 1024 * 1024;
const MAX_WRITE_FAILURES = 5;

/** Options of {@link LogSink}. */
export interface LogSinkOptions {
  /** Longest time a buffered line waits, in ms; default 50. */
  flushMs?: number;
  /** A buffer this full is written at once; default 1000 lines. */
  batchLines?: number;
  /** Buffered text (UTF-16 code units) above which producers should wait; default 64 Mi. */
  maxPendingBytes?: number;
  logger?: Logger;
  /** How long a write is retried while PostgreSQL is unavailable, in ms; default 10 min (`RUN_DB_OUTAGE_MAX_MS`). */
  outageMaxMs?: number;
  /** Directory for spilled lines during an outage; absent: nothing spills (memory and backpressure only). */
  spillDir?: string;
  /** Text in memory during an outage above which pending lines spill to disk; default 8 Mi. */
  spillAfterBytes?: number;
  /** Most spilled bytes; default 1 Gi. */
  spillMaxBytes?: number;
  /** Texts replaced by `*****` in every line (the run's secret profile values, Dagu spec 022b); default none. */
  masks?: readonly string[];
}

interface PendingStream {
  /** Number of the first pending line. */
  first: number;
  lines: string[];
}

type Chunk = SpilledChunk;

/** Buffers lines of many streams and writes them in chunks. */
export class LogSink implements LogBackpressure {
  private pending = new Map<number, PendingStream>();
  private pendingLines = 0;
  private readonly masks: readonly string[];
  private pendingBytes = 0;
  private readonly totals = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private roomWaiters: Array<() => void> = [];
  private readonly flushMs: number;
  private readonly batchLines: number;
  private readonly maxPendingBytes: number;
  private readonly spill: LogSpill | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly options: LogSinkOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 50;
    this.batchLines = options.batchLines ?? 1000;
    this.maxPendingBytes = options.maxPendingBytes ?? 64 * 1024 * 1024;
    // Longest first: a secret that contains another is masked whole.
    this.masks = [...new Set(options.masks ?? [])].filter((m) => m !== '').sort((a, b) => b.length - a.length);
    if (options.spillDir !== undefined)
      this.spill = new LogSpill(options.spillDir, options.spillMaxBytes ?? 1024 * 1024 * 1024);
  }

  /** Chunk batches spilled to disk and not written back yet. */
  private get spilled(): number {
    return this.spill?.size ?? 0;
  }

  /** A writer for stream `streamId` whose next line is `startLine + 1` (writers of one stream share the numbering). */
  stream(streamId: number, startLine = 0): LogStreamWriter {
    if (!this.totals.has(streamId)) this.totals.set(streamId, startLine);
    const totals = this.totals;
    return {
      streamId,
      append: (text: string): number => this.append(streamId, text),
      get lineCount() {
        return totals.get(streamId) ?? 0;
      },
    };
  }

  /** True while more than `maxPendingBytes` of text wait to be written. */
  get overloaded(): boolean {
    return this.pendingBytes > this.maxPendingBytes;
  }

  /** Resolves once the buffer is below half of `maxPendingBytes` (at once when it is). */
  waitForRoom(): Promise<void> {
    if (this.pendingBytes <= this.maxPendingBytes / 2) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Writes everything appended so far; resolves when it is in PostgreSQL (or was given up on after repeated failures). */
  async flush(): Promise<void> {
    while (this.writing !== undefined || this.pendingLines > 0 || this.spilled > 0) {
      if (this.writing !== undefined) await this.writing;
      else this.startWrite();
    }
  }

  private append(streamId: number, raw: string): number {
    const text = maskLine(raw.includes('\n') ? raw.replace(/\r?\n/g, ' ') : raw, this.masks);
    const lineNo = (this.totals.get(streamId) ?? 0) + 1;
    this.totals.set(streamId, lineNo);
    let stream = this.pending.get(streamId);
    if (stream === undefined) {
      stream = { first: lineNo, lines: [] };
      this.pending.set(streamId, stream);
    }
    stream.lines.push(text);
    this.pendingLines++;
    this.pendingBytes += text.length + 1;
    if (this.writing === undefined) {
      if (this.pendingLines >= this.batchLines) this.startWrite();
      else if (this.timer === undefined) this.timer = setTimeout(() => this.startWrite(), this.flushMs);
    }
    return lineNo;
  }

  /** Takes pending lines, as chunks, up to {@link MAX_STATEMENT_BYTES} of text (one pass, no repeated array shifts). */
  private takeChunks(): Chunk[] {
    const chunks: Chunk[] = [];
    let budget = MAX_STATEMENT_BYTES;
    for (const [streamId, stream] of this.pending) {
      const { lines } = stream;
      let at = 0;
      while (at < lines.length && budget > 0) {
        let end = at;
        let bytes = 0;
        while (end < lines.length && end - at < CHUNK_LINES && (end === at || bytes < CHUNK_BYTES)) {
          bytes += (lines[end]?.length ?? 0) + 1;
          end++;
        }
        chunks.push({ streamId, first: stream.first + at, lines: lines.slice(at, end) });
        this.pendingBytes -= bytes;
        budget -= bytes;
        at = end;
      }
      this.pendingLines -= at;
      stream.first += at;
      if (at === lines.length) this.pending.delete(streamId);
      else stream.lines = lines.slice(at);
      if (budget <= 0) break;
    }
    return chunks;
  }

  private startWrite(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing !== undefined || (this.pendingLines === 0 && this.spilled === 0)) return;
    this.writing = this.writeNext().finally(() => {
      this.writing = undefined;
      if (this.pendingLines >= this.batchLines || this.spilled > 0) this.startWrite();
      else if (this.pendingLines > 0 && this.timer === undefined)
        this.timer = setTimeout(() => this.startWrite(), this.flushMs);
    });
  }

  /** Writes the oldest pending batch: spilled ones first (they are older than the memory buffer). */
  private async writeNext(): Promise<void> {
    let chunks: Chunk[];
    try {
      chunks = this.spill !== undefined && this.spill.size > 0 ? await this.spill.shift() : this.takeChunks();
    } catch (error) {
      this.options.logger?.error(
        { err: error instanceof Error ? error.message : String(error) },
        'spilled log lines could not be read back: dropped',
      );
      await this.spill?.close();
      return;
    }
    this.releaseWaiters();
    await this.write(chunks);
  }

  /**
   * During an outage: moves the memory buffer to the spill file once it holds
   * more than `spillAfterBytes` (one batch per statement's worth). Stops at
   * the spill's bound (the memory buffer and backpressure take over) or on a
   * disk failure (logged; the lines stay in memory).
   */
  private async spillPending(): Promise<void> {
    const spill = this.spill;
    if (spill === undefined || this.pendingBytes <= (this.options.spillAfterBytes ?? 8 * 1024 * 1024)) return;
    try {
      while (this.pendingLines > 0) {
        const chunks = this.takeChunks();
        if (!(await spill.append(chunks))) {
          this.restore(chunks); // the spill is full
          return;
        }
      }
    } catch (error) {
      this.options.logger?.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'log lines could not be spilled to disk: kept in memory',
      );
    }
    this.releaseWaiters();
  }

  /** Undoes one {@link LogSink.takeChunks}: `chunks` go back in front of what was appended since. */
  private restore(chunks: readonly Chunk[]): void {
    for (const chunk of [...chunks].reverse()) {
      this.pendingLines += chunk.lines.length;
      this.pendingBytes += chunk.lines.reduce((sum, line) => sum + line.length + 1, 0);
      const stream = this.pending.get(chunk.streamId);
      if (stream === undefined) this.pending.set(chunk.streamId, { first: chunk.first, lines: [...chunk.lines] });
      else {
        stream.first = chunk.first;
        stream.lines = [...chunk.lines, ...stream.lines];
      }
    }
  }

  private releaseWaiters(): void {
    if (this.pendingBytes > this.maxPendingBytes / 2 || this.roomWaiters.length === 0) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }

  private async write(chunks: readonly Chunk[]): Promise<void> {
    const texts = chunks.map((chunk) => chunk.lines.join('\n'));
    const totals = new Map<number, { total: number; bytes: number }>();
    chunks.forEach((chunk, i) => {
      const entry = totals.get(chunk.streamId) ?? { total: 0, bytes: 0 };
      entry.total = Math.max(entry.total, chunk.first + chunk.lines.length - 1);
      entry.bytes += Buffer.byteLength(texts[i] ?? '') + 1;
      totals.set(chunk.streamId, entry);
    });
    const streamIds = [...totals.keys()];
    const params = [
      chunks.map((chunk) => chunk.streamId),
      chunks.map((chunk) => chunk.first),
      chunks.map((chunk) => chunk.lines.length),
      texts,
      streamIds,
      streamIds.map((id) => totals.get(id)?.total ?? 0),
      streamIds.map((id) => totals.get(id)?.bytes ?? 0),
    ];
    const sql = `WITH ins AS (
        INSERT INTO log_chunks (stream_id, first_line, line_count, text)
        SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[])
        ON CONFLICT DO NOTHING
      )
      UPDATE log_streams s SET total_lines = GREATEST(s.total_lines, v.total), total_bytes = s.total_bytes + v.bytes
      FROM unnest($5::bigint[], $6::int[], $7::bigint[]) AS v(id, total, bytes) WHERE s.id = v.id`;
    let outageSince: number | undefined;
    for (let failures = 1; ; failures++) {
      try {
        await this.pool.query(sql, params);
        if (outageSince !== undefined)
          this.options.logger?.info({ outageMs: Date.now() - outageSince }, 'log writes resumed after an outage');
        return;
      } catch (error) {
        const lines = chunks.reduce((sum, chunk) => sum + chunk.lines.length, 0);
        const err = error instanceof Error ? error.message : String(error);
        if (isTransientPgFailure(error)) {
          outageSince ??= Date.now();
          if (Date.now() - outageSince < (this.options.outageMaxMs ?? 600_000)) {
            if (failures === 1)
              this.options.logger?.warn({ err, lines }, 'log write failed: PostgreSQL unavailable, retrying');
            await this.spillPending();
            await new Promise((resolve) => setTimeout(resolve, outageBackoffMs(failures)));
            continue;
          }
        } else {
          this.options.logger?.warn({ err, lines }, 'log write failed');
          if (failures < MAX_WRITE_FAILURES) {
            await new Promise((resolve) => setTimeout(resolve, 200 * failures));
            continue;
          }
        }
        this.options.logger?.error({ lines }, 'log lines dropped after repeated write failures');
        return;
      }
    }
  }
}

/** The mask of a secret in a log line (Dagu spec 022b). */
export const SECRET_MASK = '*****';

/** `line` with every occurrence of each of `masks` replaced by {@link SECRET_MASK}. */
export function maskLine(line: string, masks: readonly string[]): string {
  let text = line;
  for (const secret of masks) if (text.includes(secret)) text = text.split(secret).join(SECRET_MASK);
  return text;
}
