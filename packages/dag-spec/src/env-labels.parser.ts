/**
 * `env` (map, list of one-entry maps, or `KEY=value` list) and
 * `labels`/`tags` (comma-separated string, list, or map) — dagu-model.md §3.
 */
import type { EnvVar } from './dag.types';
import type { ErrorSink } from './error-sink';
import { asMap, scalarToString } from './yaml-values';

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parses an `env` value into ordered `{key, value}` pairs (values as strings,
 * `${…}` references kept for the engine). Errors name `field` (e.g. `env`,
 * `defaults.env`): bad shapes, `KEY=value` items without `=`, invalid keys.
 */
export function parseEnv(value: unknown, field: string, sink: ErrorSink): EnvVar[] {
  const out: EnvVar[] = [];
  const add = (key: string, raw: unknown, itemField: string): void => {
    const text = scalarToString(raw);
    if (!ENV_KEY.test(key)) sink.field(itemField, 'invalid environment variable name', key);
    else if (text === undefined) sink.field(itemField, 'environment value must be a scalar', raw);
    else out.push({ key, value: text });
  };
  if (value === null || value === undefined) return out;
  const map = asMap(value);
  if (map) {
    for (const [key, raw] of map) add(key, raw, `${field}.${key}`);
  } else if (Array.isArray(value)) {
    value.forEach((item: unknown, index: number) => {
      const itemField = `${field}[${index}]`;
      const entry = asMap(item);
      if (typeof item === 'string') {
        const eq = item.indexOf('=');
        if (eq <= 0) sink.field(itemField, 'must be KEY=value', item);
        else add(item.slice(0, eq).trim(), item.slice(eq + 1), itemField);
      } else if (entry?.size === 1) {
        for (const [key, raw] of entry) add(key, raw, itemField);
      } else {
        sink.field(itemField, 'must be KEY=value or a one-entry map', item);
      }
    });
  } else {
    sink.field(field, 'must be a map or a list', value);
  }
  return out;
}

/** Merges env lists: later lists override earlier keys, keeping first-seen order. */
export function mergeEnv(...lists: EnvVar[][]): EnvVar[] {
  const merged = new Map<string, string>();
  for (const list of lists) for (const { key, value } of list) merged.set(key, value);
  return [...merged].map(([key, value]) => ({ key, value }));
}

/**
 * Parses `labels` / `tags`: `"a, b"` → `['a', 'b']`, a list of scalars, or a
 * map `k: v` → `'k=v'`. Empty entries are dropped; order is kept.
 */
export function parseLabels(value: unknown, field: string, sink: ErrorSink): string[] {
  if (value === null || value === undefined) return [];
  const map = asMap(value);
  let raw: string[] = [];
  if (typeof value === 'string') raw = value.split(',');
  else if (map) raw = [...map].map(([key, v]) => (v === null || v === '' ? key : `${key}=${scalarToString(v) ?? ''}`));
  else if (Array.isArray(value)) {
    value.forEach((item: unknown, index: number) => {
      const text = scalarToString(item);
      if (text === undefined || item === null) sink.field(`${field}[${index}]`, 'label must be a string', item);
      else raw.push(text);
    });
  } else {
    sink.field(field, 'must be a string, a list or a map', value);
  }
  return raw.map((label) => label.trim()).filter((label) => label !== '');
}
