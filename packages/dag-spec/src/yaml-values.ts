/**
 * Helpers over the values `yaml` produces with `mapAsMap: true`: mappings are
 * `Map`s (so key order survives, even for numeric-looking keys), sequences are
 * arrays, scalars are strings, numbers, booleans, null or dates.
 */
import type { JsonValue } from './dag.types';

/** A YAML mapping with its keys as strings, in document order. */
export type YamlMap = Map<string, unknown>;

/** The value as a string-keyed mapping, or `undefined` when it is not a mapping. */
export function asMap(value: unknown): YamlMap | undefined {
  if (!(value instanceof Map)) return undefined;
  const out: YamlMap = new Map();
  for (const [key, item] of value.entries()) out.set(String(key), item);
  return out;
}

/** True for a YAML scalar that reads as text: string, number, boolean (not null). */
export function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** A scalar as a string (`null` → `''`); `undefined` for mappings and sequences. */
export function scalarToString(value: unknown): string | undefined {
  if (value === null) return '';
  if (isScalar(value)) return String(value);
  if (value instanceof Date) return value.toISOString();
  return undefined;
}

/** Converts a YAML value to plain JSON (mappings become objects). */
export function toPlain(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (isScalar(value)) return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item: unknown) => toPlain(item));
  const map = asMap(value);
  if (map) {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of map) out[key] = toPlain(item);
    return out;
  }
  // What is left (a !!set, a bigint) keeps the text String gives it, as before.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- deliberate: no JSON form exists
  return String(value);
}

/** A non-negative integer from a number or a numeric string; `undefined` otherwise. */
export function toNonNegativeInt(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** A finite number from a number or a numeric string; `undefined` otherwise. */
export function toFiniteNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** A value as a list: arrays as they are, a single value as a one-item list, null/undefined as empty. */
export function asList(value: unknown): unknown[] {
  if (value === null || value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Removes keys whose value is `undefined`, so the object stays plain JSON. */
export function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value)) {
    if (Reflect.get(value, key) === undefined) Reflect.deleteProperty(value, key);
  }
  return value;
}
