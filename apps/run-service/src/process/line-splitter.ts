import { StringDecoder } from 'node:string_decoder';

/**
 * Turns a byte stream (a step's stdout or stderr) into lines as they are
 * produced: UTF-8 decoded across chunk boundaries, split on `\n`, a trailing
 * `\r` removed, NUL characters dropped (PostgreSQL text cannot hold them).
 * A line longer than `maxLineChars` is cut into pieces of that size, so one
 * endless line cannot hold the whole output in memory. The last line without
 * a newline is emitted by {@link LineSplitter.end}.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  /**
   * @param onLine       receives each line, without its line break
   * @param maxLineChars longest line kept whole, in UTF-16 code units; default 1 MiB
   */
  constructor(
    private readonly onLine: (text: string) => void,
    private readonly maxLineChars = 1024 * 1024,
  ) {}

  /** Feeds one chunk; emits every line it completes. */
  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (text === '') return;
    const parts = (this.pending + text).split('\n');
    this.pending = parts.pop() ?? '';
    for (const part of parts) this.emitCut(part);
    while (this.pending.length > this.maxLineChars) {
      this.emit(this.pending.slice(0, this.maxLineChars));
      this.pending = this.pending.slice(this.maxLineChars);
    }
  }

  /** Flushes the decoder and emits the last line when the stream did not end with a newline. */
  end(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') this.emitCut(this.pending);
    this.pending = '';
  }

  private emitCut(line: string): void {
    if (line.length <= this.maxLineChars) return this.emit(line);
    for (let at = 0; at < line.length; at += this.maxLineChars) this.emit(line.slice(at, at + this.maxLineChars));
  }

  private emit(line: string): void {
    let text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.includes('\u0000')) text = text.replaceAll('\u0000', '');
    this.onLine(text);
  }
}
