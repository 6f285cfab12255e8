import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { readWikiPage } from '../pages/wiki-page';

/**
 * `wiki.get` — one Wiki page with its Markdown (spec 021 `wiki_page` target,
 * spec 020 `dagu://wiki/{workspace}/{path}` resource, `text/markdown`).
 *
 * Payload: `{workspace, path}` — `workspace` names one workspace (`all` is
 * refused by the request schema, spec 021 `workspace`), `path` follows
 * dagu-model §2 (no `.md` suffix).
 *
 * Reply: the Wiki page model `{id, content, mimeType: 'text/markdown', uri}`
 * plus `workspace`, `path`, `name`, `title`, `tags`, `size` (UTF-8 bytes),
 * `version`, `createdAt`, `updatedAt`, `updatedBy`. The gateway serves
 * `content` as the body of a `resources/read`.
 *
 * Errors: `resource_not_found` — field `workspace` for an unknown workspace,
 * field `path` (with `details.didYouMean` when similar paths exist) for an
 * unknown page; `resource_unavailable` when PostgreSQL cannot serve it in time.
 */
export function createWikiGetHandler(pool: Pool): OpHandler<WikiOps, 'wiki.get'> {
  return async function wikiGet(payload) {
    return readWikiPage(pool, payload);
  };
}
