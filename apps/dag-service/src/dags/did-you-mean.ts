import { distance } from 'fastest-levenshtein';
import { DaguError } from '@dagu-mcp/contracts';

/**
 * "Did you mean" suggestions for an unknown DAG name (spec 036 "Errors":
 * `resource_not_found` carries at most 3 close DAG names in
 * `details.didYouMean`; the same list is used by `dag.get` and `dag.spec`,
 * spec 021 "Errors").
 *
 * The 036 algorithm, with this project's reading of its loose ends:
 * - comparison is case-insensitive; the name asked for itself (exact,
 *   case-sensitive equality) is skipped; a name differing only in case
 *   scores 0, so it comes first;
 * - a substring match (either name contains the other, compared
 *   case-insensitively) scores 1; the contained side must be at least
 *   {@link MIN_SUBSTRING_LENGTH} characters, otherwise a one-letter DAG such as
 *   `x` would be suggested for every name containing an `x`;
 * - anything else scores its Levenshtein distance;
 * - a name is kept when its score is at most `max(2, floor(len / 3))`, `len`
 *   being the length of the name asked for;
 * - kept names sort by score, then by name (code-unit order), and the first
 *   {@link MAX_SUGGESTIONS} are returned.
 */

/** At most this many suggestions (spec 036). */
export const MAX_SUGGESTIONS = 3;
/** Shortest contained string that counts as a substring match. */
export const MIN_SUBSTRING_LENGTH = 3;

/** The score of `candidate` against the lower-cased query, before the threshold. */
function scoreOf(query: string, candidate: string): number {
  if (candidate === query) return 0;
  const [shorter, longer] = candidate.length <= query.length ? [candidate, query] : [query, candidate];
  if (shorter.length >= MIN_SUBSTRING_LENGTH && longer.includes(shorter)) return 1;
  return distance(query, candidate);
}

/**
 * Picks the names closest to `name` (spec 036 did-you-mean).
 *
 * @param name - the DAG name that was not found.
 * @param candidates - every existing DAG name (any order; duplicates are ignored).
 * @param max - how many to return; default {@link MAX_SUGGESTIONS}.
 * @returns up to `max` names, best first; empty when none is close.
 */
export function suggestDagNames(name: string, candidates: Iterable<string>, max = MAX_SUGGESTIONS): string[] {
  const query = name.toLowerCase();
  const threshold = Math.max(2, Math.floor(name.length / 3));
  const scored: { name: string; score: number }[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (candidate === name || seen.has(candidate)) continue;
    seen.add(candidate);
    // Cheap bound first: the distance is at least the difference in length.
    const lower = candidate.toLowerCase();
    const lengthGap = Math.abs(lower.length - query.length);
    const substringPossible = Math.min(lower.length, query.length) >= MIN_SUBSTRING_LENGTH;
    if (lengthGap > threshold && !substringPossible) continue;
    const score = scoreOf(query, lower);
    if (score <= threshold) scored.push({ name: candidate, score });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, max).map((entry) => entry.name);
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
