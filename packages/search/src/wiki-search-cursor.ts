import { z } from 'zod';
import { createKeysetCursor } from './keyset-cursor';

/**
 * The `wiki_search` continuation cursor (spec 021: "Opaque continuation
 * cursor returned by the same search target"; dagu-model §7): the shared
 * keyset codec (`keyset-cursor.ts`: format, limits, `invalid_tool_input` on
 * `cursor`) with this search's position and scope. Used by wiki-service.
 *
 * Keyset pagination on `(workspace, path)`, the order results are returned
 * in: the position is the last page of the previous result page, so the next
 * one starts strictly after it and the primary-key order serves it. The scope
 * is the search text, workspace selector and prefix; an absent workspace and
 * `all` are the same search.
 */

/** What a cursor is bound to. `workspace` absent or `all` are the same search. */
export interface WikiSearchScope {
  search: string;
  workspace: string | undefined;
  prefix: string | undefined;
}

/** Where the next result page starts: strictly after this page. */
export interface WikiSearchPosition {
  workspace: string;
  path: string;
}

const pageCursor = createKeysetCursor(z.strictObject({ workspace: z.string().min(1), path: z.string().min(1) }));

/** The scope as fingerprinted: `[search, workspace, prefix]`, `all` for every workspace, `''` for no prefix. */
function scopeKey(scope: WikiSearchScope): [string, string, string] {
  const workspace = scope.workspace === undefined || scope.workspace === 'all' ? 'all' : scope.workspace;
  return [scope.search, workspace, scope.prefix ?? ''];
}

/** Writes the cursor of the result page after `position`: an opaque base64url string. */
export function encodeWikiSearchCursor(position: WikiSearchPosition, scope: WikiSearchScope): string {
  return pageCursor.encode({ workspace: position.workspace, path: position.path }, scopeKey(scope));
}

/**
 * Reads a cursor a client sent back.
 *
 * @throws DaguError `invalid_tool_input` on field `cursor` when it is not a
 *   cursor of this codec or belongs to another search
 */
export function decodeWikiSearchCursor(cursor: string, scope: WikiSearchScope): WikiSearchPosition {
  return pageCursor.decode(cursor, scopeKey(scope));
}
