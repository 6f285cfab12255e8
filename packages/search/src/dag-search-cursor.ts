import { z } from 'zod';
import { createKeysetCursor } from './keyset-cursor';

/**
 * The `dag_search` continuation cursor (spec 021: "Opaque continuation cursor
 * returned by the same search target"): the shared keyset codec
 * (`keyset-cursor.ts`: format, limits, `invalid_tool_input` on `cursor`)
 * with this search's position and scope. Used by dag-service.
 *
 * Results are ordered by DAG name, so the position is the last name of the
 * page and the next page is `name > after`, served by the primary key. The
 * scope is the search text and workspace, an absent workspace and `all` being
 * the same search.
 */

/** The search a cursor belongs to: the search text and the effective workspace (`all` when absent). */
export interface DagSearchScope {
  search: string;
  workspace: string | undefined;
}

/** Where the next page starts: after this DAG name. */
export interface DagSearchPosition {
  after: string;
}

const dagNameCursor = createKeysetCursor(z.string().min(1));

/** The scope as fingerprinted: `[search, workspace]`, `all` for every workspace. */
function scopeKey(scope: DagSearchScope): [string, string] {
  return [scope.search, scope.workspace === undefined || scope.workspace === 'all' ? 'all' : scope.workspace];
}

/** Writes the cursor of the page after `position`: an opaque base64url string. */
export function encodeDagSearchCursor(position: DagSearchPosition, scope: DagSearchScope): string {
  return dagNameCursor.encode(position.after, scopeKey(scope));
}

/**
 * Reads a cursor given back by a client.
 *
 * @throws DaguError `invalid_tool_input` on field `cursor` when it is not a
 *   cursor of this codec or was issued for another search text or workspace
 */
export function decodeDagSearchCursor(cursor: string, scope: DagSearchScope): DagSearchPosition {
  return { after: dagNameCursor.decode(cursor, scopeKey(scope)) };
}
