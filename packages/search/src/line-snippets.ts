/**
 * Line snippets of a search result (spec 021 DAG and Wiki search models:
 * `matches` array of line-level snippets `{line, text}` and
 * `hasMoreMatches`; dagu-model §7 "search returns line snippets per page"):
 * one implementation for `dag_search` (over a DAG's stored YAML) and
 * `wiki_search` (over a page's stored content, frontmatter included).
 *
 * PostgreSQL picks the results (a case-insensitive `LIKE`); this module only
 * says which lines of one result matched. A line matches when it contains
 * the search text, compared case-insensitively (the same rule as the query;
 * LIKE wildcards are literal here as they are escaped there). A search text
 * that spans lines (contains `\n`) reports the line each occurrence starts
 * on. Lines split on `\n`; a trailing `\r` is dropped.
 *
 * Unified from the snippet code dag-service and wiki-service each had
 * before this package, whose rules were the same but whose clipping was not:
 * DAG snippets were cut to 200 characters with 60 before the match, wiki
 * snippets to 240 with 80. Both are now {@link MAX_SNIPPET_CHARS} = 240 with
 * up to 80 before the match: one rule for both search targets of spec 021,
 * and the longer window keeps more of a prose line or a long `run:` command
 * around the match.
 */

/** One snippet: 1-based line number and the line's text, possibly clipped (contract `SearchMatchSchema`). */
export interface LineMatch {
  line: number;
  text: string;
}

/** The snippets of one result. */
export interface LineMatches {
  matches: LineMatch[];
  /** More lines matched than `matches` holds. */
  hasMoreMatches: boolean;
}

/** Options of {@link findLineMatches}. */
export interface LineMatchOptions {
  /** Snippets returned at most; default {@link MAX_MATCHES_PER_RESULT}. */
  maxMatches?: number;
  /** Longest snippet in UTF-16 units, ellipses included; default {@link MAX_SNIPPET_CHARS}. */
  maxLength?: number;
}

/** Default cap on snippets per result. */
export const MAX_MATCHES_PER_RESULT = 5;
/** Default cap on a snippet's length: a longer line is cut to a window around its first match. */
export const MAX_SNIPPET_CHARS = 240;
/** Characters kept before the match when a line is clipped (at most a third of the snippet), so the match has context. */
const CONTEXT_BEFORE = 80;
const ELLIPSIS = '…';

/**
 * The lines of `content` that contain `search`.
 *
 * @param content the stored text (DAG YAML, wiki page)
 * @param search  non-empty search text, compared case-insensitively
 * @returns the first `maxMatches` matching lines in order, and whether more lines matched
 */
export function findLineMatches(content: string, search: string, options: LineMatchOptions = {}): LineMatches {
  const maxMatches = options.maxMatches ?? MAX_MATCHES_PER_RESULT;
  const maxLength = options.maxLength ?? MAX_SNIPPET_CHARS;
  const needle = search.toLowerCase();
  const lines = content.split('\n');
  // Lower-casing never adds or removes a newline, so line numbers of the lowered text hold.
  const spanning = needle.includes('\n') ? occurrenceLines(content.toLowerCase(), needle) : undefined;
  const matches: LineMatch[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const raw = lines[index] ?? '';
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const lowered = line.toLowerCase();
    const at = spanning === undefined ? lowered.indexOf(needle) : spanning.has(index) ? 0 : -1;
    if (at === -1) continue;
    if (matches.length === maxMatches) return { matches, hasMoreMatches: true };
    // toLowerCase can change a string's length (e.g. 'İ'); only then is the index unusable.
    matches.push({ line: index + 1, text: clipLine(line, lowered.length === line.length ? at : 0, maxLength) });
  }
  return { matches, hasMoreMatches: false };
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
 * `text` when it fits in `max` characters, else a window of it that starts a
 * little before `at` (the match's index), marked with `…` where cut.
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
