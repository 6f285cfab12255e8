import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../src/logging/logger';

/** A logger whose JSON lines a test can read back. */
export interface LogCapture {
  readonly logger: Logger;
  /** Every line written so far, parsed, in order. Clear with `lines.length = 0`. */
  readonly lines: Array<Record<string, unknown>>;
  /** Everything written so far, as raw text (to assert what must never appear). */
  text(): string;
}

/**
 * A pino logger at `level` (default `info`) that keeps its output in memory,
 * for tests that assert what was logged (one line with a stack, no secret).
 */
export function captureLogs(level = 'info'): LogCapture {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      const text = chunk.toString();
      raw.push(text);
      for (const line of text.split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, sink), lines, text: () => raw.join('') };
}
