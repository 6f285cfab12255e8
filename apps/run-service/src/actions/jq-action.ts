import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { raw as jqRaw } from 'jq-wasm';
import { ActionError, asRecord, type ActionOutput, type WithMap } from './action-types';

/**
 * `jq.filter` (dagu-actions §1.3) with jq compiled to WebAssembly (npm
 * `jq-wasm`: nothing downloaded at install, nothing installed on the image).
 * Input: `with.data` (a string is JSON text when it parses, else a JSON
 * string; `file://<path>` reads a file) or `with.input` (a JSON file).
 * `with.args` binds `$name` with its YAML type (`--argjson`). Output: each
 * result as jq prints it (objects indented by two spaces), one per line;
 * with `raw`, strings without quotes and `null` as an empty line. Any jq
 * error (compile or run time) fails the step with jq's message.
 */

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function pathFrom(text: string): string {
  return isAbsolute(text) ? text : resolve(process.cwd(), text);
}

async function inputText(w: WithMap): Promise<string> {
  if (typeof w.input === 'string') return readFile(pathFrom(w.input), 'utf8');
  const data = w.data;
  if (typeof data === 'string') {
    if (data.startsWith('file://')) return readFile(pathFrom(data.slice('file://'.length)), 'utf8');
    const trimmed = data.trim();
    try {
      JSON.parse(trimmed);
      return trimmed;
    } catch {
      // A stream of JSON values ({..} {..}) is jq input too; other text is one JSON string.
      return /^[[{"]/.test(trimmed) ? trimmed : JSON.stringify(data);
    }
  }
  return JSON.stringify(data ?? null);
}

function argFlags(args: unknown): string[] {
  if (args === undefined || args === null) return [];
  const map = asRecord(args);
  if (map === undefined) throw new ActionError('with.args must be a map');
  const flags: string[] = [];
  for (const [name, value] of Object.entries(map)) {
    if (!VARIABLE.test(name)) throw new ActionError(`jq: error: invalid variable name $${name} in with.args`);
    flags.push('--argjson', name, JSON.stringify(value ?? null));
  }
  return flags;
}

function rawLine(line: string): string {
  const value: unknown = JSON.parse(line);
  if (value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}

/** Runs the filter. @throws ActionError (jq's message) when jq fails */
export async function runJqFilter(w: WithMap): Promise<ActionOutput> {
  if (typeof w.filter !== 'string' || w.filter.trim() === '')
    throw new ActionError('with.filter must be a non-empty string');
  const input = await inputText(w);
  const flags = argFlags(w.args);
  const isRaw = w.raw === true || w.raw === 'true';
  let out: string;
  try {
    out = await jqRaw(input, w.filter, isRaw ? [...flags, '-c'] : flags);
  } catch (error) {
    throw new ActionError(error instanceof Error ? error.message : String(error));
  }
  if (out === '') return { stdout: '' };
  if (!isRaw) return { stdout: `${out}\n` };
  return { stdout: `${out.split('\n').map(rawLine).join('\n')}\n` };
}
