import { DaguError } from '@dagu-mcp/contracts';
import { MAX_SUGGESTIONS, MIN_SUBSTRING_LENGTH, suggestNames } from '@dagu-mcp/dag-spec';

/**
 * "Did you mean" suggestions for an unknown DAG name (spec 036 "Errors":
 * `resource_not_found` carries at most 3 close DAG names in
 * `details.didYouMean`; the same list is used by `dag.get` and `dag.spec`,
 * spec 021 "Errors"). The algorithm is `suggestNames` of `@dagu-mcp/dag-spec`,
 * which also suggests keys and dependencies in validation errors.
 */

export { MAX_SUGGESTIONS, MIN_SUBSTRING_LENGTH };

/**
 * Picks the DAG names closest to `name` (spec 036 did-you-mean).
 *
 * @param name - the DAG name that was not found.
 * @param candidates - every existing DAG name (any order; duplicates are ignored).
 * @param max - how many to return; default {@link MAX_SUGGESTIONS}.
 * @returns up to `max` names, best first; empty when none is close.
 */
export function suggestDagNames(name: string, candidates: Iterable<string>, max = MAX_SUGGESTIONS): string[] {
  return suggestNames(name, candidates, max);
}

/**
 * The `resource_not_found` error for an unknown DAG (specs 021, 036):
 * message `DAG "<name>" does not exist.`, and `details.didYouMean` when any
 * name is close (no `details` otherwise).
 *
 * @param name - the DAG name asked for.
 * @param candidates - every existing DAG name.
 */
export function dagNotFoundError(name: string, candidates: Iterable<string>): DaguError {
  const didYouMean = suggestDagNames(name, candidates);
  return new DaguError('resource_not_found', `DAG "${name}" does not exist.`, {
    ...(didYouMean.length > 0 ? { details: { didYouMean } } : {}),
  });
}
