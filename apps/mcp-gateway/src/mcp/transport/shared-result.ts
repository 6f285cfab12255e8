/**
 * Results served to many requests unchanged (the `dags` page a
 * gateway replica holds, tools/read/dag-page-memo.ts). A result marked here
 * is deep-frozen and its JSON is encoded once; the transport splices those
 * bytes into each answer (json-body.ts) instead of encoding the same 40 KB
 * again. Part of the transport, the lowest floor of `mcp/`: the tools above
 * mark results, and the transport never imports them.
 */

/** Marked results → their JSON as UTF-8 bytes (weak: gone with the result). */
const encodedResults = new WeakMap<object, Buffer>();

/**
 * Marks `result`, a JSON-RPC result object that will answer many requests:
 * freezes it deeply and encodes its JSON once. Idempotent.
 *
 * @returns `result`, frozen
 */
export function shareResult<T extends object>(result: T): T {
  if (!encodedResults.has(result)) encodedResults.set(deepFreeze(result), Buffer.from(JSON.stringify(result), 'utf8'));
  return result;
}

/** The stored UTF-8 JSON of a result marked by {@link shareResult}, else `undefined`. */
export function sharedResultJson(result: unknown): Buffer | undefined {
  return typeof result === 'object' && result !== null ? encodedResults.get(result) : undefined;
}

/** Freezes `value` and everything it holds (plain JSON data), and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
