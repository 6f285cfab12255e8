import type { StepOutput } from '@dagu-mcp/dag-spec';
import { jsonValueToText, selectJsonPath, tryParseJson } from './json-path';

/**
 * Values a step publishes for later steps (dagu-model §3 `outputs`/`output`):
 *
 * - `outputs`: the step writes `NAME=value` lines (or `NAME<<DELIM` … `DELIM`
 *   blocks) to `$DAGU_OUTPUT_FILE`; after a successful try the file is parsed
 *   and the declared names become `${steps.<id>.outputs.<name>}`. A declared
 *   name that was not written, an undeclared or repeated name, or a malformed
 *   line fails the try (Dagu spec 012); blank lines are ignored.
 * - `output: NAME`: the step's trimmed stdout becomes the variable `NAME`
 *   (exported to later steps, `${NAME}` in their text);
 * - `output: {name: {from, decode: json, select}}`: each field is read from
 *   stdout/stderr, optionally decoded as JSON and selected by path, and
 *   becomes `${<id>.output.<name>}`; a decode or select failure fails the try.
 *
 * Captured stdout/stderr for `output` is kept up to {@link MAX_CAPTURE_CHARS}.
 */

/** Stdout/stderr kept in memory for `output`, per stream, in UTF-16 code units (1 MiB). */
export const MAX_CAPTURE_CHARS = 1024 * 1024;

/** What a successful step published. */
export interface PublishedOutputs {
  outputs?: Record<string, string>;
  fields?: Record<string, string>;
  variable?: { name: string; value: string };
  /**
   * Not a value for later steps: why a precondition skipped the step
   * (dagu-model §5 `skipReason`). A skipped step publishes nothing, so it is
   * kept in the same stored JSON (docs/decisions.md "Skip reasons").
   */
  skipReason?: { condition: string; expected: string; actual: string };
}

/** A parse result: values or the reason the try fails. */
export type OutputResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Collects a stream's lines for `output`, up to {@link MAX_CAPTURE_CHARS}. */
export class OutputCapture {
  private parts: string[] = [];
  private size = 0;

  append(line: string): void {
    if (this.size >= MAX_CAPTURE_CHARS) return;
    const piece = line.slice(0, MAX_CAPTURE_CHARS - this.size);
    this.parts.push(piece);
    this.size += piece.length + 1;
  }

  text(): string {
    return this.parts.join('\n');
  }
}

/**
 * Parses the content of `$DAGU_OUTPUT_FILE` against the declared names.
 *
 * @returns the declared values, or the error that fails the try.
 */
export function parseOutputFile(content: string, declared: readonly string[]): OutputResult<Record<string, string>> {
  const lines = content.replace(/\r\n?/g, '\n').split('\n');
  const values: Record<string, string> = {};
  const allowed = new Set(declared);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const heredoc = /^([A-Za-z][A-Za-z0-9_]*)<<([A-Za-z_][A-Za-z0-9_]*)$/.exec(line);
    let name: string;
    let value: string;
    if (heredoc?.[1] !== undefined && heredoc[2] !== undefined) {
      const end = lines.indexOf(heredoc[2], i + 1);
      if (end < 0)
        return { ok: false, error: `output ${heredoc[1]}: unclosed ${heredoc[2]} block in $DAGU_OUTPUT_FILE` };
      name = heredoc[1];
      value = lines.slice(i + 1, end).join('\n');
      i = end;
    } else {
      const eq = line.indexOf('=');
      if (eq <= 0) return { ok: false, error: `malformed line in $DAGU_OUTPUT_FILE: ${line.slice(0, 80)}` };
      name = line.slice(0, eq);
      value = line.slice(eq + 1);
    }
    if (!allowed.has(name)) return { ok: false, error: `output ${name} is not declared in outputs` };
    if (Object.prototype.hasOwnProperty.call(values, name))
      return { ok: false, error: `output ${name} was written twice` };
    values[name] = value;
  }
  const missing = declared.filter((name) => !Object.prototype.hasOwnProperty.call(values, name));
  if (missing.length > 0)
    return { ok: false, error: `declared outputs not written to $DAGU_OUTPUT_FILE: ${missing.join(', ')}` };
  return { ok: true, value: values };
}

/**
 * The values of a step's `output` after a successful try.
 *
 * @param stdout captured stdout text; `stderr` likewise
 */
export function readStepOutput(output: StepOutput, stdout: string, stderr: string): OutputResult<PublishedOutputs> {
  if (output.kind === 'variable') return { ok: true, value: { variable: { name: output.name, value: stdout.trim() } } };
  const fields: Record<string, string> = {};
  for (const field of output.fields) {
    const source = (field.from === 'stderr' ? stderr : stdout).trim();
    if (field.decode !== 'json') {
      fields[field.name] = source;
      continue;
    }
    const parsed = tryParseJson(source);
    if (!parsed.ok)
      return { ok: false, error: `output ${field.name}: ${field.from} is not valid JSON (${parsed.error})` };
    if (field.select === undefined) {
      fields[field.name] = jsonValueToText(parsed.value);
      continue;
    }
    const selected = selectJsonPath(parsed.value, field.select);
    if (!selected.found) return { ok: false, error: `output ${field.name}: ${field.select} selects nothing` };
    fields[field.name] = jsonValueToText(selected.value);
  }
  return { ok: true, value: { fields } };
}
