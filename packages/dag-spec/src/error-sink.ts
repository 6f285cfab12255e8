/**
 * Collects validation errors as strings shaped per dagu-model.md §4:
 * `field '<f>': <message> (value: <v>)`. Errors inside a step, handler or
 * sub-DAG carry a context prefix (`step 'build': field 'id': …`) so the
 * `field '<f>': <message>` part stays intact for clients that match on it.
 */
import { toPlain } from './yaml-values';

/** Renders a value for the `(value: <v>)` part of an error: strings raw, others as JSON, at most 120 chars. */
export function renderValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(toPlain(value));
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Error collector shared by all parsers of one YAML stream; children add a context prefix. */
export class ErrorSink {
  private constructor(
    private readonly out: string[],
    private readonly prefix: string,
  ) {}

  /** A sink writing to a fresh list, with no prefix. */
  static create(): ErrorSink {
    return new ErrorSink([], '');
  }

  /** All errors collected through this sink and its children. */
  get errors(): readonly string[] {
    return this.out;
  }

  /** Number of errors collected so far (all contexts). */
  get count(): number {
    return this.out.length;
  }

  /** A child sink whose messages start with `<context>: ` after this sink's prefix. */
  child(context: string): ErrorSink {
    return new ErrorSink(this.out, `${this.prefix}${context}: `);
  }

  /** Records `field '<field>': <message>` plus ` (value: <v>)` when a value is given. */
  field(field: string, message: string, value?: unknown): void {
    const shown = value === undefined ? '' : ` (value: ${renderValue(value)})`;
    this.out.push(`${this.prefix}field '${field}': ${message}${shown}`);
  }

  /** Records an error that concerns no single field (cycles, missing dependencies). */
  plain(message: string): void {
    this.out.push(`${this.prefix}${message}`);
  }
}
