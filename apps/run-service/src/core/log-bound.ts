import type { LogStreamWriter } from './run-types';

/**
 * The stored-output bound of a step (`RUN_STEP_LOG_MAX_BYTES`;
 * docs/reliability.md "Bounded output"): of one try's stdout and stderr
 * together, the first half of the bound is stored as it comes (the head);
 * past it each stream keeps only its latest lines in memory, a quarter of the
 * bound each (the tail), and when the try ends a marker line saying how many
 * bytes were dropped is stored, then the tail. What a step stores is at most
 * the bound plus the markers, and what the engine holds for it at most half
 * the bound, however much it prints.
 *
 * Bytes are UTF-8 bytes of the line plus its line break.
 */
export class StepLogBudget {
  private headLeft: number;
  private readonly tailMax: number;

  /**
   * @param maxBytes the bound, bytes (≥ 4)
   * @throws RangeError on a bound below 4 bytes
   */
  constructor(readonly maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 4) throw new RangeError('a log bound is at least 4 bytes');
    this.headLeft = Math.floor(maxBytes / 2);
    this.tailMax = Math.floor(maxBytes / 4);
  }

  /** A writer over `writer` that stores within this budget; call {@link BoundedLogWriter.finish} when the try ends. */
  wrap(writer: LogStreamWriter): BoundedLogWriter {
    return new BoundedLogWriter(writer, this.tailMax, (bytes) => {
      if (bytes > this.headLeft) {
        // Once over, the head is closed for this stream: what follows goes to the tail in order.
        return false;
      }
      this.headLeft -= bytes;
      return true;
    });
  }
}

/** One stream of a step within a {@link StepLogBudget}. */
export class BoundedLogWriter implements LogStreamWriter {
  private tailing = false;
  /** The tail: a ring of lines (`tail[start..]` live), and their bytes. */
  private tail: string[] = [];
  private start = 0;
  private tailBytes = 0;
  private dropped = 0;

  constructor(
    private readonly writer: LogStreamWriter,
    private readonly tailMax: number,
    private readonly takeHead: (bytes: number) => boolean,
  ) {}

  get streamId(): number {
    return this.writer.streamId;
  }

  get lineCount(): number {
    return this.writer.lineCount;
  }

  /** Bytes dropped so far (they were neither stored nor are in the tail). */
  get droppedBytes(): number {
    return this.dropped;
  }

  /** Stores `text` while the head has room, else keeps it in the tail; returns the stream's line count. */
  append(text: string): number {
    const bytes = Buffer.byteLength(text) + 1;
    if (!this.tailing && this.takeHead(bytes)) return this.writer.append(text);
    this.tailing = true;
    if (bytes > this.tailMax) {
      this.dropped += this.tailBytes + bytes;
      this.tail = [];
      this.start = 0;
      this.tailBytes = 0;
      return this.writer.lineCount;
    }
    this.tail.push(text);
    this.tailBytes += bytes;
    while (this.tailBytes > this.tailMax) {
      const old = this.tail[this.start] ?? '';
      this.tail[this.start] = '';
      this.start++;
      const oldBytes = Buffer.byteLength(old) + 1;
      this.tailBytes -= oldBytes;
      this.dropped += oldBytes;
    }
    // Compact now and then, so the array does not grow with what was dropped.
    if (this.start > 4096 && this.start * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.start);
      this.start = 0;
    }
    return this.writer.lineCount;
  }

  /** Stores the marker (when bytes were dropped) and the tail. Call once, when the try ended. */
  finish(): void {
    if (!this.tailing) return;
    if (this.dropped > 0)
      this.writer.append(
        `[dagu: ${this.dropped} bytes of output dropped here (RUN_STEP_LOG_MAX_BYTES); the last ${this.tailBytes} bytes follow]`,
      );
    for (let i = this.start; i < this.tail.length; i++) this.writer.append(this.tail[i] ?? '');
    this.tail = [];
    this.start = 0;
    this.tailBytes = 0;
    this.tailing = false;
    this.dropped = 0;
  }
}
