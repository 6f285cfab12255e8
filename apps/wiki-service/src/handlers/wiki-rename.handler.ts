import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { renameWikiPage } from '../pages/wiki-rename';

/**
 * `wiki.rename` — move one page (Dagu spec 022b `rename_wiki_page`; a
 * mutation). Payload `{workspace, path, newPath}`; reply `{workspace, path:
 * newPath, previousPath, version}`. Errors: `unauthorized` (below
 * developer), `resource_not_found`, `conflict` on `newPath`,
 * `invalid_tool_input`, `resource_unavailable`.
 */
export function createWikiRenameHandler(pool: Pool): OpHandler<WikiOps, 'wiki.rename'> {
  return async function wikiRename(payload, ctx) {
    return renameWikiPage(pool, payload, ctx);
  };
}
