import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { checkWikiChange } from '../pages/wiki-rename';

/**
 * `wiki.check` — the checks of a page upsert, rename or delete without the
 * write (Dagu spec 022b preview; not a mutation, any role). Payload `{kind,
 * workspace, path, newPath?, content?}`; reply `{valid, errors, exists}`.
 * Errors: `resource_not_found`, `conflict` on `newPath`, `invalid_tool_input`.
 */
export function createWikiCheckHandler(pool: Pool): OpHandler<WikiOps, 'wiki.check'> {
  return async function wikiCheck(payload) {
    return checkWikiChange(pool, payload);
  };
}
