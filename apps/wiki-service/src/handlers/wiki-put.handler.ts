import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { putWikiPage } from '../pages/wiki-write';

/**
 * `wiki.put` — create or replace one page (REST `PUT
 * /api/v1/wiki/{workspace}/pages/{path}`; a mutation).
 *
 * Payload: `{workspace, path, content, expectedVersion?}`. `content` is the
 * Markdown (at most 1 MiB of UTF-8) stored verbatim; its YAML frontmatter
 * gives `title` and `tags`. `expectedVersion` 0 means "create only", N means
 * "only if the page is at version N".
 *
 * Reply: `{page, created, changed}` — `page` is the page metadata (no body);
 * `changed` is false when the content was already identical, in which case
 * nothing was written (so a retried write is harmless, CONTRIBUTING §6).
 *
 * The write commits only before the request's deadline (`ctx.deadline`,
 * docs/architecture.md "Request flow"); the principal's subject is recorded as
 * `updatedBy`. Errors: `unauthorized` (role below developer, dagu-model §9),
 * `invalid_tool_input` (bad frontmatter, field `content`), `conflict`
 * (version mismatch, field `expectedVersion`), `resource_unavailable`.
 */
export function createWikiPutHandler(pool: Pool): OpHandler<WikiOps, 'wiki.put'> {
  return async function wikiPut(payload, ctx) {
    return putWikiPage(pool, payload, ctx);
  };
}
