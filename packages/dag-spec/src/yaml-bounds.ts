/**
 * The size a YAML document would have once its aliases are expanded, measured
 * on the syntax tree before any value is built (docs/security.md "Bounds and browser rules").
 *
 * The `yaml` library's `maxAliasCount` counts alias uses, not what they
 * expand to: one flat list of ten thousand values aliased a thousand times
 * passes it, and expands to ten million values as soon as anything walks the
 * result (validation, JSON of the normalized DAG, the run snapshot). Here each
 * node's expanded size is computed once and reused by every alias to it, so
 * the measure costs time linear in the document, whatever it expands to.
 */
import { isAlias, isCollection, isPair, isScalar, type Document, type Node } from 'yaml';

/** Bounds of an expanded YAML document. */
export interface ExpansionLimits {
  /** Most nodes (mappings, sequences, keys, values) after alias expansion. */
  maxNodes: number;
  /** Most characters of scalar text after alias expansion. */
  maxChars: number;
}

/**
 * Default bounds: 200 000 nodes (a thousand-step DAG has some tens of
 * thousands) and 16 MiB of scalar text (four times the gateway's default
 * largest body, `BODY_LIMIT_BYTES`).
 */
export const DEFAULT_EXPANSION_LIMITS: ExpansionLimits = { maxNodes: 200_000, maxChars: 16 * 1024 * 1024 };

interface Size {
  nodes: number;
  chars: number;
}

/**
 * Measures `doc` as if every alias were replaced by a copy of its anchored
 * node (merge keys included).
 *
 * @returns a message naming the bound that is passed, or `undefined` when
 *   the expanded document fits `limits`. An alias to a node that contains it
 *   (an infinite expansion) passes every bound.
 */
export function checkExpandedSize(
  doc: Document,
  limits: ExpansionLimits = DEFAULT_EXPANSION_LIMITS,
): string | undefined {
  const sizes = new Map<unknown, Size>();
  // Anchors in document order: an alias names the latest anchor defined before it.
  const anchors = new Map<string, Node>();
  const inProgress = new Set<unknown>();
  let cyclic = false;
  const measure = (node: unknown): Size => {
    if (node === null || node === undefined) return { nodes: 0, chars: 0 };
    const known = sizes.get(node);
    if (known) return known;
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      // An unknown anchor is the yaml library's error to report; count the alias itself.
      if (target === undefined) return { nodes: 1, chars: 0 };
      if (inProgress.has(target)) {
        // An alias inside its own anchor expands without end.
        cyclic = true;
        return { nodes: Number.POSITIVE_INFINITY, chars: 0 };
      }
      return measure(target);
    }
    if (isPair(node)) {
      const key = measure(node.key);
      const value = measure(node.value);
      return { nodes: key.nodes + value.nodes, chars: key.chars + value.chars };
    }
    if (isScalar(node)) {
      if (node.anchor) anchors.set(node.anchor, node);
      const text: unknown = node.value;
      const size = { nodes: 1, chars: typeof text === 'string' ? text.length : String(text).length };
      sizes.set(node, size);
      return size;
    }
    if (!isCollection(node)) return { nodes: 1, chars: 0 };
    if (node.anchor) anchors.set(node.anchor, node);
    inProgress.add(node);
    const total = { nodes: 1, chars: 0 };
    for (const item of node.items) {
      const size = measure(item);
      total.nodes += size.nodes;
      total.chars += size.chars;
      // Stop early: the sum only grows, and an exponential one overflows to Infinity anyway.
      if (total.nodes > limits.maxNodes || total.chars > limits.maxChars) break;
    }
    inProgress.delete(node);
    sizes.set(node, total);
    return total;
  };
  const size = measure(doc.contents);
  if (cyclic) return 'an alias refers to a node that contains it';
  if (size.nodes > limits.maxNodes) {
    return `aliases expand the document to more than ${limits.maxNodes} values (the expanded size is bounded)`;
  }
  if (size.chars > limits.maxChars) {
    return `aliases expand the document to more than ${limits.maxChars} characters of text (the expanded size is bounded)`;
  }
  return undefined;
}
