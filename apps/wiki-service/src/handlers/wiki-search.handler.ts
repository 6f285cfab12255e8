import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { searchWiki } from '../pages/wiki-search';

/**
 * `wiki.search` — case-insensitive text search over page titles and bodies
 * (spec 021 `wiki_search` target; dagu-model §7).
 *
 * Payload: `search` (1–256 characters), `workspace` (a name, or `all`/absent
 * for every workspace), `prefix` (page path prefix), `cursor` (from a
 * previous reply of the same search), `limit` 1–50 (default 20).
 *
 * Reply: `{results, hasMore, nextCursor?}`; each result is `{id, workspace,
 * uri, title, matches: [{line, text}], hasMoreMatches}` with at most five
 * line snippets, in `(workspace, path)` order. `nextCursor` is present
 * exactly when `hasMore` is true.
 *
 * Errors: `invalid_tool_input` (field `cursor`) for a cursor of another
 * search; `resource_not_found` for an unknown workspace;
 * `resource_unavailable` when PostgreSQL cannot answer before the deadline.
 */
export function createWikiSearchHandler(pool: Pool): OpHandler<WikiOps, 'wiki.search'> {
  return async function wikiSearch(payload) {
    return searchWiki(pool, payload);
  };
}
