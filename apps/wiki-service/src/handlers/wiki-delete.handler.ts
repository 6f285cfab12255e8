import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { deleteWikiPage } from '../pages/wiki-write';

/**
 * `wiki.delete` — delete one page (REST `DELETE
 * /api/v1/wiki/{workspace}/pages/{path}`; a mutation).
 *
 * Payload: `{workspace, path, expectedVersion?}`; with `expectedVersion` the
 * page is deleted only while it is at that version.
 *
 * Reply: `{workspace, path, version}` — the identity and last version of the
 * deleted page. The workspace stays (it keeps existing without pages).
 *
 * The delete commits only before the request's deadline (docs/architecture.md
 * "Request flow"). A retry after a delete that succeeded answers
 * `resource_not_found`, which leaves the wiki as the first call did.
 * Errors: `unauthorized` (role below developer, dagu-model §9),
 * `resource_not_found` (unknown workspace or page), `conflict` (version
 * mismatch, field `expectedVersion`), `resource_unavailable`.
 */
export function createWikiDeleteHandler(pool: Pool): OpHandler<WikiOps, 'wiki.delete'> {
  return async function wikiDelete(payload, ctx) {
    return deleteWikiPage(pool, payload, ctx);
  };
}
