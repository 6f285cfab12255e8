import { asRecord } from './action-types';

/**
 * The functions of `template.render` (dagu-actions §1.7): Go's built-ins
 * (`and`, `or`, `not`, `len`, `index`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`,
 * `print`, `printf`, `println`) and a hermetic subset of sprig — no env,
 * time, randomness, key generation or network — with pipeline-friendly
 * argument order (the piped value comes last) for `split`, `join`, `count`,
 * `add`, `empty`, `upper`, `lower`, `trim`, `default`. Values are the JSON
 * values of `with.data`.
 */

/** A template function: its evaluated arguments in, a value out; throws to fail the render. */
export type TemplateFunc = (...args: unknown[]) => unknown;

/** Go's truth: false, 0, nil, and empty strings, lists and maps are false. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** How a value prints (`fmt`'s `%v`): nil is `<no value>`, lists `[a b]`, maps `map[k:v]`. */
export function printValue(value: unknown): string {
  if (value === null || value === undefined) return '<no value>';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(printInner).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, v]) => `${k}:${printInner(v)}`).join(' ')}]`;
  }
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

function printInner(value: unknown): string {
  return value === null || value === undefined ? '<nil>' : printValue(value);
}

function text(value: unknown): string {
  return value === null || value === undefined ? '' : printValue(value);
}

function num(value: unknown, fn: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (Number.isNaN(n)) throw new Error(`error calling ${fn}: ${printValue(value)} is not a number`);
  return n;
}

function list(value: unknown, fn: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === null || value === undefined) return [];
  throw new Error(`error calling ${fn}: ${printValue(value)} is not a list`);
}

function length(value: unknown): number {
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  if (value !== null && typeof value === 'object') return Object.keys(value).length;
  throw new Error(`error calling len: len of ${printValue(value)}`);
}

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

function compare(fn: string, a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new Error(`error calling ${fn}: incompatible types for comparison`);
}

/** `printf`'s verbs `%s %v %d %f %.Nf %q %t %x %%`. */
function sprintf(format: unknown, ...args: unknown[]): string {
  let i = 0;
  return String(format).replace(/%(\.\d+)?([svdfqtx%])/g, (_m, precision: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    const value = args[i];
    i += 1;
    if (verb === 'd') return String(Math.trunc(num(value, 'printf')));
    if (verb === 'f') return num(value, 'printf').toFixed(precision === undefined ? 6 : Number(precision.slice(1)));
    if (verb === 'q') return JSON.stringify(text(value));
    if (verb === 'x') return typeof value === 'number' ? value.toString(16) : Buffer.from(text(value)).toString('hex');
    return printValue(value);
  });
}

const FUNCS: Readonly<Record<string, TemplateFunc>> = {
  and: (...a) => a.find((v) => !truthy(v)) ?? a[a.length - 1],
  or: (...a) => a.find((v) => truthy(v)) ?? a[a.length - 1],
  not: (v) => !truthy(v),
  len: (v) => length(v),
  index: (v, ...keys) =>
    keys.reduce((cur, key) => {
      if (Array.isArray(cur)) return cur[num(key, 'index')] ?? null;
      const map = asRecord(cur);
      if (map !== undefined) return map[text(key)] ?? null;
      throw new Error(`error calling index: cannot index ${printValue(cur)}`);
    }, v),
  eq: (a, ...b) => b.some((x) => equal(a, x)),
  ne: (a, b) => !equal(a, b),
  lt: (a, b) => compare('lt', a, b) < 0,
  le: (a, b) => compare('le', a, b) <= 0,
  gt: (a, b) => compare('gt', a, b) > 0,
  ge: (a, b) => compare('ge', a, b) >= 0,
  print: (...a) => a.map(printValue).join(''),
  println: (...a) => `${a.map(printValue).join(' ')}\n`,
  printf: sprintf,
  // sprig, pipeline-friendly: the piped value is the last argument.
  upper: (s) => text(s).toUpperCase(),
  lower: (s) => text(s).toLowerCase(),
  trim: (s) => text(s).trim(),
  trimPrefix: (p, s) => (text(s).startsWith(text(p)) ? text(s).slice(text(p).length) : text(s)),
  trimSuffix: (p, s) => (text(s).endsWith(text(p)) && text(p) !== '' ? text(s).slice(0, -text(p).length) : text(s)),
  title: (s) => text(s).replace(/\b\w/g, (c) => c.toUpperCase()),
  replace: (from, to, s) => text(s).split(text(from)).join(text(to)),
  contains: (sub, s) => text(s).includes(text(sub)),
  hasPrefix: (p, s) => text(s).startsWith(text(p)),
  hasSuffix: (p, s) => text(s).endsWith(text(p)),
  repeat: (n, s) => text(s).repeat(num(n, 'repeat')),
  quote: (...a) => a.map((v: unknown) => JSON.stringify(text(v))).join(' '),
  squote: (...a) => a.map((v: unknown) => `'${text(v)}'`).join(' '),
  indent: (n, s) => text(s).replace(/^/gm, ' '.repeat(num(n, 'indent'))),
  nindent: (n, s) => `\n${text(s).replace(/^/gm, ' '.repeat(num(n, 'nindent')))}`,
  split: (sep, s) => text(s).split(text(sep)),
  splitList: (sep, s) => text(s).split(text(sep)),
  join: (sep, l) => list(l, 'join').map(text).join(text(sep)),
  count: (l) => (typeof l === 'string' ? l.length : list(l, 'count').length),
  add: (...a) => a.reduce<number>((sum, v) => sum + num(v, 'add'), 0),
  sub: (a, b) => num(a, 'sub') - num(b, 'sub'),
  mul: (...a) => a.reduce<number>((p, v) => p * num(v, 'mul'), 1),
  div: (a, b) => Math.trunc(num(a, 'div') / num(b, 'div')),
  mod: (a, b) => num(a, 'mod') % num(b, 'mod'),
  empty: (v) => !truthy(v),
  default: (d, ...v) => (v.length > 0 && truthy(v[0]) ? v[0] : d),
  coalesce: (...a) => a.find((v) => truthy(v)) ?? null,
  ternary: (a, b, cond) => (truthy(cond) ? a : b),
  toJson: (v) => JSON.stringify(v ?? null),
  toPrettyJson: (v) => JSON.stringify(v ?? null, null, 2),
  toString: (v: unknown) => text(v),
  int: (v) => Math.trunc(num(v, 'int')),
  atoi: (v) => Math.trunc(num(v, 'atoi')),
  list: (...a) => a,
  dict: (...a) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i + 1 < a.length; i += 2) out[text(a[i])] = a[i + 1];
    return out;
  },
  keys: (m) => (m !== null && typeof m === 'object' ? Object.keys(m).sort() : []),
  first: (l) => list(l, 'first')[0] ?? null,
  last: (l) => {
    const items = list(l, 'last');
    return items[items.length - 1] ?? null;
  },
};

/** The function `name`, or undefined when it is not defined. */
export function templateFunc(name: string): TemplateFunc | undefined {
  return Object.hasOwn(FUNCS, name) ? FUNCS[name] : undefined;
}
