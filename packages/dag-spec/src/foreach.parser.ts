/**
 * `foreach` (dagu-model.md §3): `{items, as, key, max_concurrent, steps,
 * collect}`. Literal `items` are limited to 1000 and their keys must be
 * unique; a string `items` is an expression resolved at run time. The body
 * `steps` are parsed like a DAG's steps (a graph; nested foreach allowed,
 * human.task not).
 */
import type { ForeachSpec, JsonValue, NormalizedStep } from './dag.types';
import type { ErrorSink } from './error-sink';
import { readKeys } from './keys';
import { asMap, compact, toPlain } from './yaml-values';

/** Most literal items a foreach may list. */
export const MAX_FOREACH_ITEMS = 1000;

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses the foreach body steps; supplied by the step-list parser (avoids an import cycle). */
export type ForeachBodyParser = (value: unknown, sink: ErrorSink) => NormalizedStep[];

/**
 * Parses a `foreach` map. Errors use fields `foreach.<key>`: missing items,
 * more than 1000 items, duplicate item keys, no steps, bad `as` or
 * `max_concurrent`. Returns `undefined` when the map itself is missing.
 */
export function parseForeach(value: unknown, sink: ErrorSink, parseBody: ForeachBodyParser): ForeachSpec | undefined {
  const map = asMap(value);
  if (!map) {
    sink.field('foreach', 'must be a map {items, as, key, max_concurrent, steps}', value);
    return undefined;
  }
  const allowed = ['items', 'as', 'key', 'max_concurrent', 'steps', 'collect'];
  const keys = readKeys(map, { allowed }, sink, 'foreach.');
  const as = keys.get('as') ?? 'item';
  if (typeof as !== 'string' || !VAR_NAME.test(as)) sink.field('foreach.as', 'must be an identifier', as);
  const itemVar = typeof as === 'string' ? as : 'item';
  const key = keys.get('key');
  if (key !== undefined && typeof key !== 'string') sink.field('foreach.key', 'must be a string', key);
  const items = parseItems(keys.get('items'), typeof key === 'string' ? key : undefined, itemVar, sink);
  const maxRaw = keys.get('max_concurrent');
  const maxConcurrent = typeof maxRaw === 'number' && Number.isInteger(maxRaw) && maxRaw > 0 ? maxRaw : undefined;
  if (maxRaw !== undefined && maxConcurrent === undefined) {
    sink.field('foreach.max_concurrent', 'must be a positive integer', maxRaw);
  }
  const stepsValue = keys.get('steps');
  const empty =
    stepsValue === undefined || stepsValue === null || (Array.isArray(stepsValue) && stepsValue.length === 0);
  const steps = empty ? [] : parseBody(stepsValue, sink);
  if (empty) sink.field('foreach.steps', 'foreach requires at least one step');
  return compact<ForeachSpec>({
    items: items ?? [],
    as: itemVar,
    key: typeof key === 'string' ? key : undefined,
    maxConcurrent,
    steps,
    collect: parseCollect(keys.get('collect'), sink),
  });
}

function parseItems(
  value: unknown,
  key: string | undefined,
  as: string,
  sink: ErrorSink,
): JsonValue[] | string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (!Array.isArray(value)) {
    sink.field('foreach.items', 'foreach items are required (a list or an expression string)', value);
    return undefined;
  }
  if (value.length > MAX_FOREACH_ITEMS) {
    sink.field('foreach.items', `foreach supports at most ${MAX_FOREACH_ITEMS} items`, `${value.length} items`);
  }
  const items = value.map((item: unknown) => toPlain(item));
  const seen = new Set<string>();
  for (const item of items) {
    const itemKey = key === undefined ? defaultKey(item) : evaluateKey(key, as, item);
    if (itemKey === undefined) continue;
    if (seen.has(itemKey)) sink.field('foreach.items', 'duplicate foreach item key', itemKey);
    seen.add(itemKey);
  }
  return items;
}

/** Without `key`, a scalar item is its own key; objects and lists have none checked here. */
function defaultKey(item: JsonValue): string | undefined {
  return item === null || typeof item === 'object' ? undefined : String(item);
}

/**
 * Evaluates a key template such as `${foreach.episode}` or
 * `${foreach.item.id}` for a literal item; `undefined` when the template
 * refers to anything else (it is then checked at run time).
 */
export function evaluateKey(template: string, as: string, item: JsonValue): string | undefined {
  let unresolved = false;
  const text = template.replace(/\$\{([^}]*)\}/g, (_whole: string, expr: string) => {
    const path = expr.trim().split('.');
    if (path[0] !== 'foreach' || (path[1] !== as && path[1] !== 'item')) {
      unresolved = true;
      return '';
    }
    let current: JsonValue | undefined = item;
    for (const part of path.slice(2)) {
      current = current !== null && typeof current === 'object' && !Array.isArray(current) ? current[part] : undefined;
    }
    if (current === undefined) unresolved = true;
    return current === undefined ? '' : typeof current === 'string' ? current : JSON.stringify(current);
  });
  return unresolved ? undefined : text;
}

function parseCollect(value: unknown, sink: ErrorSink): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const map = asMap(value);
  if (!map) {
    sink.field('foreach.collect', 'must be a map of names to templates', value);
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [name, template] of map) {
    if (!VAR_NAME.test(name) || typeof template !== 'string') {
      sink.field(`foreach.collect.${name}`, 'must map an identifier to a template string', template);
    } else out[name] = template;
  }
  return out;
}
