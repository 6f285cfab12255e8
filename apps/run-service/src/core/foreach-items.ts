import type { ForeachSpec, JsonValue } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from './interpolate';

/**
 * The items of a foreach step (dagu-model §3 `foreach`): a literal list, or a
 * string resolved at run time — interpolated, then a JSON array, else one
 * item per non-empty line. At most 1000 items; each has a key (`key`
 * template evaluated per item, else a scalar item's own text, else its
 * index) and keys must be unique.
 */

/** Most items a foreach runs. */
export const MAX_ITEMS = 1000;

/** One resolved item. */
export interface ForeachItem {
  index: number;
  key: string;
  value: JsonValue;
}

/** The text of an item as `${foreach.<as>}` shows it. */
export function itemText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The `foreach` variable of an item: `${foreach.<as>}`, `${foreach.index}`, `${foreach.key}` (JSON selected by the interpolator). */
export function foreachVariable(spec: ForeachSpec, item: ForeachItem): string {
  return JSON.stringify({ [spec.as]: item.value, index: item.index, key: item.key });
}

function withForeach(scope: InterpolationScope, value: string): InterpolationScope {
  const outputVars = new Map(scope.outputVars);
  outputVars.set('foreach', value);
  return { ...scope, outputVars };
}

/** Resolves the items, or the error that fails the step. */
export function resolveItems(
  spec: ForeachSpec,
  scope: InterpolationScope,
): { ok: true; items: ForeachItem[] } | { ok: false; error: string } {
  let values: JsonValue[];
  if (typeof spec.items === 'string') {
    const text = interpolate(spec.items, scope, 'plain').trim();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    values = Array.isArray(parsed)
      ? parsed.filter(isJson)
      : text
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line !== '');
  } else values = spec.items;
  if (values.length > MAX_ITEMS)
    return { ok: false, error: `foreach resolved ${values.length} items; at most ${MAX_ITEMS} are allowed` };
  const items: ForeachItem[] = [];
  const seen = new Set<string>();
  for (const [index, value] of values.entries()) {
    const provisional: ForeachItem = { index, key: String(index), value };
    let key = typeof value === 'object' && value !== null ? String(index) : itemText(value);
    if (spec.key !== undefined)
      key = interpolate(spec.key, withForeach(scope, foreachVariable(spec, provisional)), 'plain');
    if (seen.has(key)) return { ok: false, error: `duplicate foreach item key ${key}` };
    seen.add(key);
    items.push({ index, key, value });
  }
  return { ok: true, items };
}

function isJson(value: unknown): value is JsonValue {
  return value === null || ['string', 'number', 'boolean', 'object'].includes(typeof value);
}
