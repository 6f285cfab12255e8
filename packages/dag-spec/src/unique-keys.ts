/**
 * Duplicate mapping keys, found in time linear in the document.
 *
 * The `yaml` library's `uniqueKeys` compares each new key with every earlier key of its
 * mapping: a flat mapping of 50 000 keys (680 KB) took 48 s to parse, 100 000 keys more
 * than seven minutes, on the service's thread. Parsing with `uniqueKeys: false` and
 * checking here, with one set of key values per mapping, refuses the same keys: two
 * scalar keys are the same when their values are (`===`, as the library compares them).
 */
import { isAlias, isMap, isPair, isScalar, isSeq, type Document } from 'yaml';

/**
 * The start offsets of the keys that repeat an earlier key of the same mapping, in text
 * order. Aliases are not followed (an alias is its anchor's node, checked there).
 */
export function duplicateKeyOffsets(doc: Document): number[] {
  const offsets: number[] = [];
  // An explicit stack: nesting is bounded by the pre-scan, but the walk need not rely on it.
  const pending: unknown[] = [doc.contents];
  while (pending.length > 0) {
    const node = pending.pop();
    if (isAlias(node)) continue;
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          if (seen.has(key.value)) offsets.push(key.range?.[0] ?? 0);
          else seen.add(key.value);
        }
        pending.push(key, pair.value);
      }
    } else if (isSeq(node)) for (const item of node.items) pending.push(item);
    else if (isPair(node)) pending.push(node.key, node.value);
  }
  return offsets.sort((a, b) => a - b);
}
