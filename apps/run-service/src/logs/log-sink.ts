import type { Logger, Pool } from '@dagu-mcp/runtime';

/**
 * Buffered, batched writes of log lines to PostgreSQL (ARCHITECTURE "logs
 * are stored so that any replica can read them"; dagu-model §6).
 *
 * One sink per running attempt. `append` is synchronous and cheap: it numbers
 * the line and buffers it, so a step producing output never waits for the
 * database. The buffer is written when it holds `batchLines` lines or
 * `flushMs` after its first line, whichever comes first, by one multi-row
 * INSERT (`unnest` of arrays) that also advances each stream's counter row
 * (`log_streams.total_lines`) in the same statement — readers never see a
 * counter ahead of its lines. One write is in flight at a time, so batches
 * commit in line order; while one is in flight the next batch grows (up to
 * {@link MAX_STATEMENT_LINES}), which is how the sink keeps up with a fast
 * producer.
 *
 * Backpressure: past `maxPendingLines` buffered lines {@link LogSink.overloaded}
 * is true and producers may wait on {@link LogSink.waitForRoom} (the process
 * runner pauses the child's pipes, which blocks the child only in that case).
 */

/** Lines written by one INSERT at most. */
export const MAX_STATEMENT_LINES = 20_000;
const MAX_WRITE_FAILURES = 5;

/** Options of {@link LogSink}. */
export interface LogSinkOptions {
  /** Longest time a buffered line waits, in ms; default 50. */
  flushMs?: number;
  /** A buffer this full is written at once; default 1000 lines. */
  batchLines?: number;
  /** Buffered lines above which producers should wait; default 200000. */
  maxPendingLines?: number;
  logger?: Logger;
}

/** Appends lines to one stream; line numbers continue from the stream's count when it was opened. */
export interface LogStreamWriter {
  readonly streamId: number;
  /** Buffers one line (no line break) and returns its 1-based number. */
  append(text: string): number;
  /** Lines in the stream so far (written or buffered). */
  readonly lineCount: number;
}

/** Buffers lines of many streams and writes them in batches. */
export class LogSink {
  private ids: number[] = [];
  private numbers: number[] = [];
  private texts: string[] = [];
  private readonly totals = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private roomWaiters: Array<() => void> = [];
  private failures = 0;
  private readonly flushMs: number;
  private readonly batchLines: number;
  private readonly maxPendingLines: number;

  constructor(
    private readonly pool: Pool,
    private readonly options: LogSinkOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 50;
    this.batchLines = options.batchLines ?? 1000;
    this.maxPendingLines = options.maxPendingLines ?? 200_000;
  }

  /**
   * A writer for stream `streamId` whose next line is `startLine + 1`.
   * Two writers of the same stream in one sink share the numbering.
   */
  stream(streamId: number, startLine = 0): LogStreamWriter {
    if (!this.totals.has(streamId)) this.totals.set(streamId, startLine);
    const totals = this.totals;
    const append = (text: string): number => this.append(streamId, text);
    return {
      streamId,
      append,
      get lineCount() {
        return totals.get(streamId) ?? 0;
      },
    };
  }

  /** Lines buffered and not yet written. */
  get pendingLines(): number {
    return this.ids.length;
  }

  /** True while more than `maxPendingLines` lines wait to be written. */
  get overloaded(): boolean {
    return this.ids.length > this.maxPendingLines;
  }

  /** Resolves once the buffer is below half of `maxPendingLines` (at once when it is). */
  waitForRoom(): Promise<void> {
    if (this.ids.length <= this.maxPendingLines / 2) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Writes everything appended so far; resolves when it is in PostgreSQL (or was given up on after repeated failures). */
  async flush(): Promise<void> {
    while (this.writing !== undefined || this.ids.length > 0) {
      if (this.writing !== undefined) await this.writing;
      else this.startWrite();
    }
  }

  private append(streamId: number, text: string): number {
    const lineNo = (this.totals.get(streamId) ?? 0) + 1;
    this.totals.set(streamId, lineNo);
    this.ids.push(streamId);
    this.numbers.push(lineNo);
    this.texts.push(text);
    if (this.writing === undefined) {
      if (this.ids.length >= this.batchLines) this.startWrite();
      else if (this.timer === undefined) this.timer = setTimeout(() => this.startWrite(), this.flushMs);
    }
    return lineNo;
  }

  private startWrite(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing !== undefined || this.ids.length === 0) return;
    const count = Math.min(this.ids.length, MAX_STATEMENT_LINES);
    const ids = this.ids.splice(0, count);
    const numbers = this.numbers.splice(0, count);
    const texts = this.texts.splice(0, count);
    this.releaseWaiters();
    this.writing = this.write(ids, numbers, texts).finally(() => {
      this.writing = undefined;
      if (this.ids.length >= this.batchLines) this.startWrite();
      else if (this.ids.length > 0 && this.timer === undefined) this.timer = setTimeout(() => this.startWrite(), this.flushMs);
    });
  }

  private releaseWaiters(): void {
    if (this.ids.length > this.maxPendingLines / 2 || this.roomWaiters.length === 0) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }

  private async write(ids: number[], numbers: number[], texts: string[]): Promise<void> {
    const counters = new Map<number, { total: number; bytes: number }>();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] ?? 0;
      const entry = counters.get(id) ?? { total: 0, bytes: 0 };
      entry.total = Math.max(entry.total, numbers[i] ?? 0);
      entry.bytes += Buffer.byteLength(texts[i] ?? '') + 1;
      counters.set(id, entry);
    }
    const streamIds = [...counters.keys()];
    const params = [ids, numbers, texts, streamIds, streamIds.map((id) => counters.get(id)?.total ?? 0), streamIds.map((id) => counters.get(id)?.bytes ?? 0)];
    const sql = `WITH ins AS (
        INSERT INTO log_lines (stream_id, line_no, text)
        SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[])
        ON CONFLICT DO NOTHING
      )
      UPDATE log_streams s SET total_lines = GREATEST(s.total_lines, v.total), total_bytes = s.total_bytes + v.bytes
      FROM unnest($4::bigint[], $5::int[], $6::bigint[]) AS v(id, total, bytes) WHERE s.id = v.id`;
    for (;;) {
      try {
        await this.pool.query(sql, params);
        this.failures = 0;
        return;
      } catch (error) {
        this.failures++;
        this.options.logger?.warn({ err: error instanceof Error ? error.message : String(error), lines: ids.length }, 'log write failed');
        if (this.failures >= MAX_WRITE_FAILURES) {
          this.options.logger?.error({ lines: ids.length }, 'log lines dropped after repeated write failures');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * this.failures));
      }
    }
  }
}
