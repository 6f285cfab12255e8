import { z } from 'zod';
import type { WikiSearchReply, WikiSearchRequest } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { withStorageErrors } from '../db/storage-errors';
import { containsPattern, nameKeyOf, prefixPattern } from './page-keys';
import { pageUriOf } from './page.records';
import { decodeSearchCursor, encodeSearchCursor, type SearchScope } from './search-cursor';
import { findMatches } from './search-snippets';
import { requireWorkspace, selectedWorkspace } from './wiki-collection';

/**
 * `wiki_search` (spec 021 Wiki search model; dagu-model §7): a
 * case-insensitive substring search over page titles and bodies.
 *
 * PostgreSQL selects the pages: `content ILIKE '%text%' OR title ILIKE
 * '%text%'`, answered from the pg_trgm GIN indexes (texts of three or more
 * characters narrow the candidates by trigram; shorter ones are rechecked
 * row by row). Results come in `(workspace, path)` order, one result page at
 * a time after the cursor; only the pages of that result page are read back
 * to cut their matching lines into snippets.
 */

/** Results per call when `limit` is absent (spec 021 allows 1–50). */
export const DEFAULT_SEARCH_LIMIT = 20;

const HitRowSchema = z.object({ workspace: z.string(), path: z.string(), title: z.string(), content: z.string() });

/**
 * Runs one search call.
 *
 * @returns `results` (each: `id` path, `workspace`, `uri`, `title`, `matches`
 *   line snippets `{line, text}` — at most 5, `hasMoreMatches`), `hasMore`,
 *   and `nextCursor` when `hasMore`. A page matched by its title alone has no
 *   snippets.
 * @throws DaguError `invalid_tool_input` (field `cursor`) for a cursor of
 *   another search; `resource_not_found` for an unknown workspace;
 *   `resource_unavailable` when PostgreSQL cannot serve it in time
 */
export async function searchWiki(pool: Pool, request: WikiSearchRequest): Promise<WikiSearchReply> {
  const workspace = selectedWorkspace(request.workspace);
  const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
  const scope: SearchScope = { search: request.search, workspace, prefix: request.prefix };
  const after = request.cursor === undefined ? undefined : decodeSearchCursor(request.cursor, scope);

  const values: unknown[] = [containsPattern(request.search)];
  const conditions = ['(content ILIKE $1 OR title ILIKE $1)'];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (workspace !== undefined) conditions.push(`workspace = ${bind(workspace)}`);
  if (request.prefix !== undefined) conditions.push(`name_key LIKE ${bind(prefixPattern(nameKeyOf(request.prefix)))} ESCAPE '\\'`);
  if (after !== undefined) conditions.push(`(workspace, path) > (${bind(after.workspace)}, ${bind(after.path)})`);
  const sql = `SELECT workspace, path, title, content FROM pages WHERE ${conditions.join(' AND ')}
    ORDER BY workspace, path LIMIT ${bind(limit + 1)}`;

  const rows = await withStorageErrors(async () => {
    if (workspace !== undefined) await requireWorkspace(pool, workspace);
    return (await pool.query<Record<string, unknown>>(sql, values)).rows;
  });
  const hits = rows.map((row) => HitRowSchema.parse(row));
  const hasMore = hits.length > limit;
  const shown = hasMore ? hits.slice(0, limit) : hits;
  const results = shown.map((hit) => ({
    id: hit.path,
    workspace: hit.workspace,
    uri: pageUriOf(hit.workspace, hit.path),
    title: hit.title,
    ...findMatches(hit.content, request.search),
  }));
  const last = shown[shown.length - 1];
  const nextCursor = hasMore && last !== undefined ? encodeSearchCursor({ workspace: last.workspace, path: last.path }, scope) : undefined;
  return { results, hasMore, ...(nextCursor !== undefined ? { nextCursor } : {}) };
}
