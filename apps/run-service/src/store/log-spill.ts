import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * The disk part of a log sink's outage buffer: while
 * PostgreSQL is unavailable and more than `RUN_LOG_SPILL_AFTER_BYTES` of log
 * text waits in memory, the sink moves its pending chunks here, one batch (an
 * INSERT's worth) per JSON line, appended in order; when PostgreSQL is back
 * the sink writes the batches back first-in first-out, before what is in
 * memory (which is newer), so chunks still reach PostgreSQL in line order.
 * One file per sink, `<dir>/log-<pid>-<random>.jsonl`, deleted once empty.
 * Spilled lines are the DAG's step output: the directory must be as private
 * as the run working directories (mode 0700 when created here).
 */

/** One chunk of one stream's lines, as a log sink writes it. */
export interface SpilledChunk {
  streamId: number;
  first: number;
  lines: string[];
}

const BatchSchema = z.array(
  z.object({ streamId: z.number().int(), first: z.number().int(), lines: z.array(z.string()) }),
);

/** A FIFO of chunk batches in one file. */
export class LogSpill {
  private handle: FileHandle | undefined;
  private path: string | undefined;
  private end = 0;
  private readonly batches: Array<{ offset: number; length: number }> = [];
  private spilledBytes = 0;

  constructor(
    private readonly dir: string,
    /** Most bytes this spill holds at once; {@link LogSpill.append} refuses past it. */
    private readonly maxBytes: number,
  ) {}

  /** Batches waiting to be written back. */
  get size(): number {
    return this.batches.length;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.spilledBytes;
  }

  /**
   * Appends one batch. @returns false (nothing written) when it would pass
   * `maxBytes`; a disk failure rejects.
   */
  async append(chunks: readonly SpilledChunk[]): Promise<boolean> {
    const data = Buffer.from(`${JSON.stringify(chunks)}\n`);
    if (this.spilledBytes + data.length > this.maxBytes) return false;
    if (this.handle === undefined) {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      this.path = join(this.dir, `log-${process.pid}-${randomBytes(6).toString('hex')}.jsonl`);
      this.handle = await open(this.path, 'w+', 0o600);
      this.end = 0;
    }
    await this.handle.write(data, 0, data.length, this.end);
    this.batches.push({ offset: this.end, length: data.length });
    this.end += data.length;
    this.spilledBytes += data.length;
    return true;
  }

  /** The oldest batch, read back; the file is deleted when it was the last. */
  async shift(): Promise<SpilledChunk[]> {
    const batch = this.batches.shift();
    if (batch === undefined || this.handle === undefined) return [];
    const buffer = Buffer.alloc(batch.length);
    await this.handle.read(buffer, 0, batch.length, batch.offset);
    this.spilledBytes -= batch.length;
    const chunks = BatchSchema.parse(JSON.parse(buffer.toString('utf8')));
    if (this.batches.length === 0) await this.close();
    return chunks;
  }

  /** Closes and deletes the file (what it held is lost: call when empty, or when giving up). */
  async close(): Promise<void> {
    const { handle, path } = this;
    this.handle = undefined;
    this.path = undefined;
    this.batches.length = 0;
    this.spilledBytes = 0;
    await handle?.close().catch(() => undefined);
    if (path !== undefined) await rm(path, { force: true });
  }
}
