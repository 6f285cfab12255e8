/**
 * `params` in its three YAML forms (dagu-model.md §3) → an ordered list of
 * `{name, default}`:
 * - a string `A=1 B="two words" positional` (quotes as in a shell; bare words
 *   are positional params named `1`, `2`, … counted among positional ones);
 * - a list whose items are such strings, one-entry maps `{NAME: default}`, or
 *   typed declarations `{name, type, enum, default, description, …}`;
 * - a map `NAME: default`.
 */
import type { ParamDef } from './dag.types';
import type { ErrorSink } from './error-sink';
import { isReservedValueName, reservedNameMessage } from './reserved-names';
import { readKeys } from './keys';
import { asMap, compact, scalarToString, toFiniteNumber, type YamlMap } from './yaml-values';

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PARAM_TYPES = ['string', 'integer', 'number', 'boolean'] as const;
const DECLARATION_KEYS = ['name', 'type', 'enum', 'default', 'description', 'minimum', 'maximum', 'required'];

/** A raw token of the string form: `name` is absent for positional values. */
interface ParamToken {
  name?: string;
  value: string;
}

/**
 * Splits `A=1 B="x y" 'pos'` into tokens. Quotes (`"…"` with `\` escapes,
 * `'…'`) are removed; backtick command substitutions are kept verbatim for
 * the engine. Returns an error message on an unterminated quote.
 */
export function tokenizeParamString(text: string): ParamToken[] | string {
  const tokens: ParamToken[] = [];
  let pos = 0;
  while (pos < text.length) {
    while (pos < text.length && /\s/.test(text.charAt(pos))) pos++;
    if (pos >= text.length) break;
    const named = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(text.slice(pos));
    if (named?.[1] !== undefined) pos += named[0].length;
    let value = '';
    while (pos < text.length && !/\s/.test(text.charAt(pos))) {
      const ch = text.charAt(pos);
      if (ch === '"' || ch === "'" || ch === '`') {
        const end = findClosing(text, pos);
        if (end < 0) return `unterminated ${ch} quote`;
        const inner = text.slice(pos + 1, end);
        value += ch === '`' ? `\`${inner}\`` : ch === '"' ? inner.replace(/\\(["\\])/g, '$1') : inner;
        pos = end + 1;
      } else {
        value += ch;
        pos++;
      }
    }
    tokens.push(named?.[1] !== undefined ? { name: named[1], value } : { value });
  }
  return tokens;
}

function findClosing(text: string, open: number): number {
  const quote = text.charAt(open);
  for (let i = open + 1; i < text.length; i++) {
    if (quote === '"' && text.charAt(i) === '\\') i++;
    else if (text.charAt(i) === quote) return i;
  }
  return -1;
}

/**
 * Parses a `params` value. Errors (field `params`): unterminated quotes,
 * invalid names, duplicate names, non-scalar defaults, malformed declarations.
 */
export function parseParams(value: unknown, sink: ErrorSink): ParamDef[] {
  const out: ParamDef[] = [];
  let positional = 0;
  const addTokens = (text: string): void => {
    const tokens = tokenizeParamString(text);
    if (typeof tokens === 'string') return sink.field('params', tokens, text);
    for (const token of tokens) {
      out.push({ name: token.name ?? String(++positional), default: token.value });
    }
  };
  const map = asMap(value);
  if (value === null || value === undefined) return out;
  if (typeof value === 'string') addTokens(value);
  else if (map) addNamed(map, out, sink, 'params');
  else if (Array.isArray(value)) {
    value.forEach((item: unknown, index: number) => {
      const entry = asMap(item);
      const field = `params[${index}]`;
      if (typeof item === 'string') addTokens(item);
      else if (entry?.has('name') === true) addDeclaration(entry, out, sink, field);
      else if (entry?.size === 1) addNamed(entry, out, sink, field);
      else sink.field(field, 'must be a string, a one-entry map or a param declaration with a name', item);
    });
  } else sink.field('params', 'must be a string, a list or a map', value);
  checkNames(out, sink);
  return out;
}

function addNamed(map: YamlMap, out: ParamDef[], sink: ErrorSink, field: string): void {
  for (const [name, raw] of map) {
    const text = scalarToString(raw);
    if (text === undefined) sink.field(`${field}.${name}`, 'param default must be a scalar', raw);
    else out.push({ name, default: text });
  }
}

function addDeclaration(map: YamlMap, out: ParamDef[], sink: ErrorSink, field: string): void {
  const keys = readKeys(map, { allowed: DECLARATION_KEYS }, sink, `${field}.`);
  const name = keys.get('name');
  if (typeof name !== 'string') return sink.field(`${field}.name`, 'param name must be a string', name);
  const raw = keys.get('default');
  const def = raw === undefined ? null : scalarToString(raw);
  if (def === undefined) sink.field(`${field}.default`, 'param default must be a scalar', raw);
  const type = keys.get('type');
  const knownType = PARAM_TYPES.find((t) => t === type);
  if (type !== undefined && knownType === undefined) {
    sink.field(`${field}.type`, `must be one of ${PARAM_TYPES.join(', ')}`, type);
  }
  const enumValues = keys.get('enum');
  const choices = Array.isArray(enumValues) ? enumValues.map((v: unknown) => scalarToString(v) ?? '') : undefined;
  if (enumValues !== undefined && choices === undefined) sink.field(`${field}.enum`, 'must be a list', enumValues);
  const description = keys.get('description');
  const required = keys.get('required');
  out.push(
    compact<ParamDef>({
      name,
      default: def ?? null,
      description: typeof description === 'string' ? description : undefined,
      type: knownType,
      enum: choices,
      minimum: toFiniteNumber(keys.get('minimum')),
      maximum: toFiniteNumber(keys.get('maximum')),
      required: typeof required === 'boolean' ? required : undefined,
    }),
  );
}

function checkNames(params: ParamDef[], sink: ErrorSink): void {
  const seen = new Set<string>();
  for (const param of params) {
    if (!PARAM_NAME.test(param.name) && !/^\d+$/.test(param.name)) {
      sink.field('params', 'invalid param name', param.name);
    } else if (seen.has(param.name)) {
      sink.field('params', 'duplicate param name', param.name);
    } else if (isReservedValueName(param.name)) {
      sink.field('params', reservedNameMessage(param.name), param.name);
    }
    seen.add(param.name);
  }
}
