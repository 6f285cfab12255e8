/**
 * Sort keys of a page path, stored beside the page (table `pages`, columns
 * `name_key` and `type_key`) so PostgreSQL can page through a workspace in
 * the order its tree is drawn (spec 021 `wiki` query `sort`; dagu-model §2
 * paths), served by a B-tree index instead of a sort in JavaScript.
 *
 * Both keys are compared in code-unit order (`COLLATE "C"` in PostgreSQL,
 * `<` on strings in JavaScript). Paths hold only `[A-Za-z0-9._-/]`, and
 * `-` and `.` sort before `/` in that order, so comparing raw paths would
 * interleave a folder's pages with its siblings (`a-b` between `a/x` and
 * `a/y` is not a tree order). Both keys therefore replace the separator with
 * {@link SEPARATOR}, which sorts before every path character.
 */

/** Sorts before every character allowed in a path (U+0001; PostgreSQL text allows it, NUL it does not). */
export const SEPARATOR = '\u0001';
/** Marks a folder segment in the type key: folders sort before pages on the same level. */
const FOLDER_MARK = '0';
/** Marks the page (last) segment in the type key. */
const PAGE_MARK = '1';

/**
 * Key of `sort=name`: depth-first tree order, folders and pages of one level
 * interleaved by name, a page before the folder of the same name.
 *
 * Shape: `nameKeyOf('guides/intro')` → `'guides\u0001intro'`.
 */
export function nameKeyOf(path: string): string {
  return path.split('/').join(SEPARATOR);
}

/**
 * Key of `sort=type` (the default): depth-first tree order with every level's
 * folders before its pages, each group by name.
 *
 * Shape: `typeKeyOf('guides/intro')` → `'0guides\u00011intro'`; `typeKeyOf('readme')` → `'1readme'`.
 */
export function typeKeyOf(path: string): string {
  const segments = path.split('/');
  const page = segments.pop() ?? '';
  return segments.map((folder) => `${FOLDER_MARK}${folder}${SEPARATOR}`).join('') + `${PAGE_MARK}${page}`;
}

/** The page's own name: its last path segment. */
export function pageNameOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? path : path.slice(slash + 1);
}

/**
 * Escapes `%`, `_` and `\` for a `LIKE … ESCAPE '\'` pattern. Paths may hold
 * `_`, which LIKE would otherwise read as "any character".
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** `LIKE` pattern of a path prefix (spec 021 `prefix`): plain string prefix, `guides/in` matches `guides/intro`. */
export function prefixPattern(prefix: string): string {
  return `${escapeLike(prefix)}%`;
}

/** `ILIKE` pattern of a search text: a case-insensitive substring match. */
export function containsPattern(search: string): string {
  return `%${escapeLike(search)}%`;
}
