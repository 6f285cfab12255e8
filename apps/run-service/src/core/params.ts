import { DaguError } from '@dagu-mcp/contracts';
import { isReservedValueName, reservedNameMessage, type ParamDef } from '@dagu-mcp/dag-spec';

/**
 * Run params (dagu-model §3 "Params"): the DAG declares named params with
 * defaults; a run's params override them by name. The run's params arrive as
 * a string `A=1 B="two words" positional` or as compact JSON (036 re-encodes
 * an object argument). Positional values (bare words) are named `1`, `2`, …
 * and override the DAG's positional params by position.
 *
 * This module is pure: it merges and validates. Evaluating defaults
 * (variable references, backtick command substitution) happens when the
 * run starts (`run-environment.ts`), never in a bus handler.
 */

/** One effective param. `fromDefault`: the value is the DAG's default (evaluated at run start). */
export interface RunParam {
  name: string;
  value: string;
  fromDefault: boolean;
}

interface ParamToken {
  name?: string;
  value: string;
}

const NAMED = /^([A-Za-z_][A-Za-z0-9_]*)=/;

function invalid(message: string): DaguError {
  return new DaguError('invalid_tool_input', message, { field: 'params' });
}

/** Reads a quoted section starting at `open`; returns its text and the index after the closing quote. */
function readQuoted(text: string, open: number): { value: string; end: number } {
  const quote = text.charAt(open);
  let value = '';
  for (let i = open + 1; i < text.length; i++) {
    const ch = text.charAt(i);
    if (quote === '"' && ch === '\\' && i + 1 < text.length) {
      value += text.charAt(++i);
    } else if (ch === quote) {
      return { value: quote === '`' ? `\`${value}\`` : value, end: i + 1 };
    } else {
      value += ch;
    }
  }
  throw invalid(`The params string has an unterminated ${quote} quote.`);
}

/**
 * Splits a params string into tokens, shell-like: whitespace separates,
 * `"…"` (with `\` escapes) and `'…'` quote, `\` outside quotes escapes the
 * next character, backticks are kept for evaluation.
 *
 * @throws DaguError `invalid_tool_input` (field `params`) on an unterminated quote
 */
export function tokenizeParams(text: string): ParamToken[] {
  const tokens: ParamToken[] = [];
  let pos = 0;
  while (pos < text.length) {
    while (pos < text.length && /\s/.test(text.charAt(pos))) pos++;
    if (pos >= text.length) break;
    const named = NAMED.exec(text.slice(pos));
    if (named !== null) pos += named[0].length;
    let value = '';
    while (pos < text.length && !/\s/.test(text.charAt(pos))) {
      const ch = text.charAt(pos);
      if (ch === '\\' && pos + 1 < text.length) {
        value += text.charAt(pos + 1);
        pos += 2;
      } else if (ch === '"' || ch === "'" || ch === '`') {
        const quoted = readQuoted(text, pos);
        value += quoted.value;
        pos = quoted.end;
      } else {
        value += ch;
        pos++;
      }
    }
    tokens.push(named?.[1] !== undefined ? { name: named[1], value } : { value });
  }
  return tokens;
}

function jsonScalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // Objects and arrays keep their JSON text; nothing else can come out of JSON.parse.
  return JSON.stringify(value) ?? '';
}

/**
 * Reads the run's params argument: a JSON object (036: compact JSON of an
 * object argument) gives named params; anything else is a params string.
 */
export function parseParamInput(input: string | undefined): ParamToken[] {
  const text = (input ?? '').trim();
  if (text === '') return [];
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return Object.entries(parsed).map(([name, value]) => ({ name, value: jsonScalarText(value) }));
    }
  }
  return tokenizeParams(text);
}

/**
 * The effective params of a run: the DAG's declared params in declaration
 * order, overridden by name (named) or position (positional) by the run's
 * params; run params the DAG does not declare are appended.
 *
 * A DAG that declares params accepts only those names (positional ones are
 * named `1`, `2`, …); a DAG that declares none accepts any name, as Dagu does
 * (dagu-model §3 "Params"). No name may be a reserved one (`PATH`, `LD_*`,
 * `DAG_*`, …, dagu-model §3).
 *
 * @throws DaguError `invalid_tool_input`: field `params.<NAME>` (and
 *   `details.param`) when a required param has no value or a value breaks its
 *   declared type, enum or range; field `params` when a
 *   name is not a valid param name, is reserved, or is not declared (the
 *   message and `details.unknown` name every unknown one).
 */
export function mergeParams(defs: readonly ParamDef[], input: string | undefined): RunParam[] {
  const merged: RunParam[] = defs.map((def) => ({ name: def.name, value: def.default ?? '', fromDefault: true }));
  const given = new Set<string>();
  const unknown: string[] = [];
  const positional = new Map<string, string>();
  let position = 0;
  for (const token of parseParamInput(input)) {
    const name = token.name ?? String(++position);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !/^\d+$/.test(name)) throw invalid(`Invalid param name '${name}'.`);
    if (isReservedValueName(name)) throw invalid(`The param name ${reservedNameMessage(name)}.`);
    if (defs.length > 0 && !defs.some((def) => def.name === name)) {
      if (!unknown.includes(name)) {
        unknown.push(name);
        if (token.name === undefined) positional.set(name, token.value);
      }
      continue;
    }
    given.add(name);
    const existing = merged.find((param) => param.name === name);
    if (existing !== undefined) {
      existing.value = token.value;
      existing.fromDefault = false;
    } else merged.push({ name, value: token.value, fromDefault: false });
  }
  if (unknown.length > 0) {
    throw unknownParamsError(unknown, positional, defs);
  }
  for (const def of defs) checkParam(def, merged, given);
  return merged;
}

/** A refused value of the declared param `name`: `field` names it (`params.<NAME>`). */
function invalidValue(name: string, message: string): DaguError {
  return new DaguError('invalid_tool_input', message, { field: `params.${name}`, details: { param: name } });
}

function checkParam(def: ParamDef, merged: readonly RunParam[], given: ReadonlySet<string>): void {
  const value = merged.find((param) => param.name === def.name)?.value ?? '';
  const refuse = (rule: string): DaguError => invalidValue(def.name, `The param ${def.name} ${rule}.`);
  if (def.required === true && def.default === null && !given.has(def.name)) throw refuse('is required');
  if (!given.has(def.name)) return;
  const shown = JSON.stringify(value);
  if (def.type === 'integer' && !/^-?\d+$/.test(value)) throw refuse(`must be an integer, not ${shown}`);
  if (def.type === 'number' && (value.trim() === '' || !Number.isFinite(Number(value)))) {
    throw refuse(`must be a number, not ${shown}`);
  }
  if (def.type === 'boolean' && value !== 'true' && value !== 'false') {
    throw refuse(`must be true or false, not ${shown}`);
  }
  if (def.enum !== undefined && def.enum.length > 0 && !def.enum.includes(value)) {
    throw refuse(`must be one of ${def.enum.join(', ')}, not ${shown}`);
  }
  const numeric = Number(value);
  if (def.minimum !== undefined && numeric < def.minimum) throw refuse(`must be at least ${def.minimum}`);
  if (def.maximum !== undefined && numeric > def.maximum) throw refuse(`must be at most ${def.maximum}`);
}

function quoteParamValue(value: string): string {
  return value === '' || /[\s"'`\\]/.test(value) ? `"${value.replace(/(["\\])/g, '\\$1')}"` : value;
}

/** The params as one string, `A=1 B="two words" pos` (the run-detail `params`). */
export function formatParams(params: readonly RunParam[]): string {
  return params
    .map((param) =>
      /^\d+$/.test(param.name) ? quoteParamValue(param.value) : `${param.name}=${quoteParamValue(param.value)}`,
    )
    .join(' ');
}

/**
 * The refusal of undeclared params (docs/decisions.md "Messages a newcomer meets"): each named by its name, a positional
 * value by the value itself (`the positional value "ord-9" (param 1)`, not "Unknown param 1"),
 * with how to name it when the DAG's params have names.
 */
function unknownParamsError(
  unknown: readonly string[],
  positional: ReadonlyMap<string, string>,
  defs: readonly ParamDef[],
): DaguError {
  const declared = defs.map((def) => def.name);
  const shown = unknown.map((name) => {
    const value = positional.get(name);
    return value === undefined ? name : `the positional value ${JSON.stringify(value)} (param ${name})`;
  });
  const named = declared.find((name) => !/^\d+$/.test(name));
  const hint =
    positional.size > 0 && named !== undefined
      ? ` Give values by name, e.g. ${named}=${[...positional.values()][0] ?? '…'}.`
      : '';
  return new DaguError(
    'invalid_tool_input',
    `Unknown param${unknown.length > 1 ? 's' : ''}: ${shown.join(', ')}. This DAG declares only ${declared.join(', ')}.${hint}`,
    {
      field: 'params',
      details: { unknown, declared, ...(positional.size > 0 ? { positional: Object.fromEntries(positional) } : {}) },
    },
  );
}
