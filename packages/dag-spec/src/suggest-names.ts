import { distance } from 'fastest-levenshtein';

/**
 * "Did you mean" suggestions (spec 036 "Errors": at most 3 close names), used
 * for unknown DAG names (dag-service), unknown YAML keys and unknown
 * dependencies (this package).
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
 * @param name - the name that was not found.
 * @param candidates - every existing name (any order; duplicates are ignored).
 * @param max - how many to return; default {@link MAX_SUGGESTIONS}.
 * @returns up to `max` names, best first; empty when none is close.
 */
export function suggestNames(name: string, candidates: Iterable<string>, max = MAX_SUGGESTIONS): string[] {
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
 * The suffix of a validation error for an unknown name: `; did you mean 'x'?`
 * (or `'x' or 'y'`), empty when nothing is close.
 */
export function didYouMeanSuffix(name: string, candidates: Iterable<string>): string {
  const close = suggestNames(name, candidates);
  return close.length === 0 ? '' : `; did you mean ${close.map((c) => `'${c}'`).join(' or ')}?`;
}
