/**
 * The line snippets of one `wiki_search` result (spec 021 Wiki search model:
 * `matches` array of snippets and `hasMoreMatches`; dagu-model §7 "search
 * returns line snippets per page").
 *
 * PostgreSQL picks the pages (a trigram-indexed `ILIKE`); this module only
 * reads the few pages of one result page to say which lines matched. A line
 * matches when it contains the search text, case-insensitively. A search text
 * spanning lines reports the line each occurrence starts on. Lines are counted
 * in the stored content, frontmatter included, so `line` points into exactly
 * what a `wiki_page` read returns.
 */

/** One snippet: 1-based line number and the line's text (possibly clipped). */
export interface PageMatch {
  line: number;
  text: string;
}

/** Snippets returned per page at most. */
export const MAX_MATCHES_PER_PAGE = 5;
/** Longest snippet, in UTF-16 units, ellipses included. */
export const MAX_SNIPPET_CHARS = 240;
/** Characters kept before the match when a long line is clipped (at most a third of the snippet). */
const CONTEXT_BEFORE = 80;
const ELLIPSIS = '…';

/**
 * Cuts a long line to a window around `at` (the match's index), marking cuts
 * with `…`. Lines of at most `max` characters are returned whole.
 */
export function clipLine(text: string, at: number, max: number = MAX_SNIPPET_CHARS): string {
  if (text.length <= max) return text;
  const before = Math.min(CONTEXT_BEFORE, Math.floor(max / 3));
  const start = Math.max(0, Math.min(at - before, text.length - max + 1));
  const head = start === 0 ? '' : ELLIPSIS;
  const room = max - head.length;
  if (start + room >= text.length) return head + text.slice(start);
  return head + text.slice(start, start + room - 1) + ELLIPSIS;
}

/** 0-based line indexes where occurrences of a multi-line `needle` start in `haystack` (both lowered). */
function occurrenceLines(haystack: string, needle: string): Set<number> {
  const found = new Set<number>();
  let line = 0;
  let scanned = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    for (; scanned < at; scanned += 1) if (haystack.charCodeAt(scanned) === 10) line += 1;
    found.add(line);
  }
  return found;
}

/**
 * The matching lines of `content`.
 *
 * @param search non-empty search text, compared case-insensitively
 * @param max snippets kept at most (default {@link MAX_MATCHES_PER_PAGE})
 * @returns the first `max` matching lines in order, and whether more lines matched
 */
export function findMatches(
  content: string,
  search: string,
  max: number = MAX_MATCHES_PER_PAGE,
): { matches: PageMatch[]; hasMoreMatches: boolean } {
  const needle = search.toLowerCase();
  const lines = content.split('\n');
  // Lower-casing never adds or removes a newline, so line numbers of the lowered text hold.
  const spanning = needle.includes('\n') ? occurrenceLines(content.toLowerCase(), needle) : undefined;
  const matches: PageMatch[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const raw = lines[index] ?? '';
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const lowered = line.toLowerCase();
    const at = spanning === undefined ? lowered.indexOf(needle) : spanning.has(index) ? 0 : -1;
    if (at === -1) continue;
    if (matches.length === max) return { matches, hasMoreMatches: true };
    // A few characters change length when lowered (e.g. U+0130); then the index is only approximate.
    matches.push({ line: index + 1, text: clipLine(line, lowered.length === line.length ? at : 0) });
  }
  return { matches, hasMoreMatches: false };
}
