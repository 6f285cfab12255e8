import { parseDagSpec, type DagSpecResult } from '@dagu-mcp/dag-spec';

/**
 * The parsed DAG specs this replica saw last: every run parses its
 * spec at least twice (`run.start` validates it, the engine plans the attempt
 * from the stored snapshot), and runs of one DAG share one spec text, so the
 * YAML parse and normalization (about 9 % of run-service's time in a burst of
 * one-step runs) is done once per distinct `(name, spec)`.
 *
 * A result is a pure function of its key (`parseDagSpec` reads nothing else),
 * so a held one is exact. Results are deep-frozen before they are shared:
 * a caller that tried to change one would throw instead of corrupting the
 * next run's DAG. Bounds: {@link MAX_ENTRIES} results, and a total weight of
 * {@link MAX_WEIGHT}, an entry weighing its key plus its result as JSON (a
 * short spec can expand, through YAML aliases and sub-DAG documents, into a
 * large DAG: the result is what stays in memory); least recently used goes
 * first; an entry over {@link MAX_HELD_WEIGHT} is parsed and never held.
 */
const MAX_ENTRIES = 256;
const MAX_WEIGHT = 16 * 1024 * 1024;
const MAX_HELD_WEIGHT = 512 * 1024;

const held = new Map<string, { result: DagSpecResult; weight: number }>();
let heldWeight = 0;

/**
 * `parseDagSpec(spec, { name })` with the default expansion limits, through
 * the memo. The result is frozen (deeply) and may be the same object for
 * every caller of one key.
 *
 * @param spec  the DAG YAML stream
 * @param name  the DAG's name (dagu-model §4), as `parseDagSpec`'s `opts.name`
 * @returns `{valid, errors, warnings, dag, subDags}` (see `parseDagSpec`)
 */
export function parseDagSpecMemo(spec: string, name: string): DagSpecResult {
  const hit = heldDagSpec(spec, name);
  if (hit !== undefined) return hit;
  const result = deepFreeze(parseDagSpec(spec, { name }));
  if (spec.length + name.length + 1 > MAX_HELD_WEIGHT) return result;
  holdDagSpec(spec, name, result, spec.length + name.length + 1 + JSON.stringify(result).length, MAX_HELD_WEIGHT);
  return result;
}

/** The memo's result for `(spec, name)`, marked most recently used; `undefined` when not held. */
export function heldDagSpec(spec: string, name: string): DagSpecResult | undefined {
  const key = `${name}\u0000${spec}`;
  const hit = held.get(key);
  if (hit === undefined) return undefined;
  // Map order is insertion order: re-inserting marks it most recently used.
  held.delete(key);
  held.set(key, hit);
  return hit.result;
}

/**
 * Holds `result` (deep-frozen here) as the parse of `(spec, name)` when its `weight` (key plus
 * result as JSON, characters) is at most `maxWeight`, dropping the least recently used past
 * the memo's bounds. A result parsed on a thread (dag-spec-threads.ts) is held up to a quarter
 * of the memo, so that the engine's later in-thread look-ups of a large spec find it.
 *
 * @returns the frozen result
 */
export function holdDagSpec(
  spec: string,
  name: string,
  result: DagSpecResult,
  weight: number,
  maxWeight: number,
): DagSpecResult {
  const frozen = deepFreeze(result);
  if (weight > Math.min(maxWeight, MAX_WEIGHT / 4)) return frozen;
  const key = `${name}\u0000${spec}`;
  const before = held.get(key);
  if (before !== undefined) heldWeight -= before.weight;
  held.delete(key);
  held.set(key, { result: frozen, weight });
  heldWeight += weight;
  for (const [oldest, entry] of held) {
    if (held.size <= MAX_ENTRIES && heldWeight <= MAX_WEIGHT) break;
    held.delete(oldest);
    heldWeight -= entry.weight;
  }
  return frozen;
}

/** Empties the memo (tests). */
export function clearDagSpecMemo(): void {
  held.clear();
  heldWeight = 0;
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (value instanceof Map) {
    for (const [k, v] of value) {
      deepFreeze(k);
      deepFreeze(v);
    }
  } else if (value instanceof Set) {
    for (const v of value) deepFreeze(v);
  } else {
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
