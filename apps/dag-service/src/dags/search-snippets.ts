/**
 * Line-level snippets of a `dag_search` result (spec 021 DAG search model:
 * `matches` array of line-level snippets and `hasMoreMatches`).
 *
 * A line matches when it contains the search text, compared
 * case-insensitively (the same rule as the `ILIKE` that selected the DAG).
 * A search text that spans lines (contains `\n`) reports the line each
 * occurrence starts on.
 */

/** A snippet: 1-based line number and that line's text (contract `SearchMatchSchema`). */
export interface SearchMatch {
  line: number;
  text: string;
}

/** Options of {@link extractSnippets}. */
export interface SnippetOptions {
  /** Matching lines returned at most; default {@link MAX_MATCHES_PER_RESULT}. */
  maxMatches?: number;
  /** Longest snippet text in characters (UTF-16 units), ellipses included; default {@link MAX_SNIPPET_LENGTH}. */
  maxLength?: number;
}

/** Default cap on snippets per DAG. */
export const MAX_MATCHES_PER_RESULT = 5;
/** Default cap on a snippet's length: a longer line is cut to a window around its first match. */
export const MAX_SNIPPET_LENGTH = 200;
/** How much of a long line is kept before the match (at most a third of the snippet), so the match has context. */
const LEAD_CONTEXT = 60;
const ELLIPSIS = '…';

/**
 * Finds the lines of `spec` that contain `search`.
 *
 * @param spec - the stored YAML; lines split on `\n`, a trailing `\r` is dropped.
 * @param search - the search text, non-empty.
 * @returns the first `maxMatches` matching lines in order, and whether more lines matched.
 */
export function extractSnippets(
  spec: string,
  search: string,
  options: SnippetOptions = {},
): { matches: SearchMatch[]; hasMoreMatches: boolean } {
  const maxMatches = options.maxMatches ?? MAX_MATCHES_PER_RESULT;
  const maxLength = options.maxLength ?? MAX_SNIPPET_LENGTH;
  const lines = spec.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  const needle = search.toLowerCase();
  const matchingLines = needle.includes('\n') ? linesOfOccurrences(spec.toLowerCase(), needle) : undefined;
  const matches: SearchMatch[] = [];
  let hasMoreMatches = false;
  for (let index = 0; index < lines.length; index += 1) {
    const text = lines[index] ?? '';
    const lowered = text.toLowerCase();
    const at = matchingLines === undefined ? lowered.indexOf(needle) : matchingLines.has(index) ? 0 : -1;
    if (at < 0) continue;
    if (matches.length === maxMatches) {
      hasMoreMatches = true;
      break;
    }
    // toLowerCase can change a string's length (e.g. 'İ'); only then is the index unusable.
    const position = lowered.length === text.length ? at : 0;
    matches.push({ line: index + 1, text: clip(text, position, maxLength) });
  }
  return { matches, hasMoreMatches };
}

/**
 * The 0-based lines on which occurrences of a multi-line `needle` start.
 * Lower-casing never adds or removes `\n`, so line numbers of the lowered
 * text are those of the original.
 */
function linesOfOccurrences(haystack: string, needle: string): Set<number> {
  const lines = new Set<number>();
  let line = 0;
  let counted = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
    for (; counted < at; counted += 1) if (haystack.charCodeAt(counted) === 10) line += 1;
    lines.add(line);
  }
  return lines;
}

/**
 * `text` when it fits in `maxLength`, else a window of it that starts a
 * little before `position` (the match), marked with `…` where cut.
 */
export function clip(text: string, position: number, maxLength: number): string {
  if (text.length <= maxLength) return text;
  const leadContext = Math.min(LEAD_CONTEXT, Math.floor(maxLength / 3));
  const start = Math.max(0, Math.min(position - leadContext, text.length - (maxLength - 1)));
  const lead = start > 0 ? ELLIPSIS : '';
  const room = maxLength - lead.length;
  const end = start + room;
  if (end >= text.length) return lead + text.slice(start);
  return lead + text.slice(start, end - 1) + ELLIPSIS;
}
