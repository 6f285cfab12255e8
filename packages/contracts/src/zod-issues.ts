import type { z } from 'zod';

/** Issue codes zod gives a field that is simply absent: a wrong type, not one of an enum's values, no union member. */
const ABSENT_CODES: ReadonlySet<string> = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/**
 * The dotted path of a zod issue (`tools.0.name`), or `undefined` for an issue on the whole value.
 */
export function fieldOfIssue(issue: z.core.$ZodIssue): string | undefined {
  if (issue.path.length === 0) return undefined;
  return issue.path.map((part) => (typeof part === 'symbol' ? part.toString() : String(part))).join('.');
}

/**
 * Whether a zod issue is about a field that is absent from `root` (the value that was parsed):
 * its path leads to `undefined` and its code is one a missing value gets (docs/decisions.md "Messages a newcomer meets").
 */
export function isMissingFieldIssue(issue: z.core.$ZodIssue, root: unknown): boolean {
  return issue.path.length > 0 && ABSENT_CODES.has(issue.code) && valueAtPath(root, issue.path) === undefined;
}

/**
 * What a zod issue says to a person (docs/decisions.md "Messages a newcomer meets"): `required` for a field that is absent
 * (not zod's "Invalid option: expected one of …" nor "expected string, received undefined"),
 * else zod's message. The caller prefixes the field ({@link fieldOfIssue}).
 *
 * @param root the value that was parsed, to tell an absent field from a wrong one
 */
export function issueMessage(issue: z.core.$ZodIssue, root: unknown): string {
  return isMissingFieldIssue(issue, root) ? 'required' : issue.message;
}

/** The value at a zod issue path inside `root`, or `undefined` when any step is missing. */
function valueAtPath(root: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = Reflect.get(node, key);
  }
  return node;
}
