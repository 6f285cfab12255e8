import { StepLogBudget } from './log-bound';
import type { LogStreamWriter } from './run-types';

function memoryWriter(): LogStreamWriter & { lines: string[] } {
  const lines: string[] = [];
  return {
    streamId: 1,
    lines,
    append: (text) => lines.push(text),
    get lineCount() {
      return lines.length;
    },
  };
}

const bytesOf = (lines: readonly string[]): number => lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

describe('StepLogBudget (RUN_STEP_LOG_MAX_BYTES)', () => {
  it('stores everything under the bound, no marker', () => {
    const out = memoryWriter();
    const writer = new StepLogBudget(1000).wrap(out);
    for (let i = 0; i < 10; i++) writer.append(`line ${i}`);
    writer.finish();
    expect(out.lines).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i}`));
  });

  it('keeps the head and the tail with a marker saying how many bytes were dropped', () => {
    const out = memoryWriter();
    const writer = new StepLogBudget(400).wrap(out);
    const lines = Array.from({ length: 1000 }, (_, i) => `l${String(i).padStart(7, '0')}`); // 9 bytes each
    for (const line of lines) writer.append(line);
    writer.finish();
    const marker = out.lines.findIndex((line) => line.startsWith('[dagu: '));
    const head = out.lines.slice(0, marker);
    const tail = out.lines.slice(marker + 1);
    expect(head).toEqual(lines.slice(0, head.length));
    expect(tail).toEqual(lines.slice(lines.length - tail.length));
    expect(bytesOf(head)).toBeLessThanOrEqual(200);
    expect(bytesOf(tail)).toBeLessThanOrEqual(100);
    const dropped = bytesOf(lines) - bytesOf(head) - bytesOf(tail);
    expect(out.lines[marker]).toBe(
      `[dagu: ${dropped} bytes of output dropped here (RUN_STEP_LOG_MAX_BYTES); the last ${bytesOf(tail)} bytes follow]`,
    );
  });

  it("shares the head between a step's streams", () => {
    const stdout = memoryWriter();
    const stderr = memoryWriter();
    const budget = new StepLogBudget(80);
    const out = budget.wrap(stdout);
    const err = budget.wrap(stderr);
    out.append('a'.repeat(29)); // 30 bytes
    err.append('b'.repeat(9)); // 10 bytes: the head (40) is full
    err.append('c');
    out.append('d');
    out.finish();
    err.finish();
    expect(stdout.lines).toEqual(['a'.repeat(29), 'd']);
    expect(stderr.lines).toEqual(['b'.repeat(9), 'c']);
  });
});
