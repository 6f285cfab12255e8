import type { OpHandler } from '@dagu-mcp/bus';
import type { WikiOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { readWikiCollection } from '../pages/wiki-collection';

/**
 * `wiki.list` — one page of the Wiki collection (spec 021 `wiki` target and
 * the `dagu://wiki`, `dagu://wiki/{workspace}` resources of spec 020).
 *
 * Payload (validated against `WikiListRequestSchema` by the bus before this
 * runs): `workspace` (a name, or `all`/absent for every workspace) and the
 * spec 021 `wiki` query — `page` ≥ 1 (default 1), `perPage` 1–200 (default
 * 50), `flat` (default false), `sort` `name`|`type`|`mtime` (default `type`),
 * `order` `asc`|`desc` (default `asc`), `prefix`.
 *
 * Reply: `{tree | items, pagination: {page, perPage, total, totalPages},
 * workspace?, flat, sort, order}`; tree entries and items carry `id` and, for
 * pages, the canonical `dagu://wiki/{workspace}/{path}` URI.
 *
 * Errors: `resource_not_found` (unknown workspace, field `workspace`),
 * `resource_unavailable` (PostgreSQL down, or the deadline passed). Reads
 * only, so running it twice is harmless (CONTRIBUTING §6).
 */
export function createWikiListHandler(pool: Pool): OpHandler<WikiOps, 'wiki.list'> {
  return async function wikiList(payload) {
    return readWikiCollection(pool, payload);
  };
}
