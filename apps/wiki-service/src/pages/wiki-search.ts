import { z } from 'zod';
import type { WikiSearchReply, WikiSearchRequest } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import {
  decodeWikiSearchCursor,
  encodeWikiSearchCursor,
  findLineMatches,
  type WikiSearchScope,
} from '@dagu-mcp/search';
import { withStorageErrors } from '../db/storage-errors';
import { containsPattern, prefixPattern } from './page-keys';
import { pageUriOf } from './page.records';
import { requireWorkspace, selectedWorkspace } from './wiki-collection';

/**
 * `wiki_search` (spec 021 Wiki search model; dagu-model §7): a
 * case-insensitive substring search over page titles and bodies.
 *
 * PostgreSQL selects the pages, matching `search_text` (title and body,
 * lowered on write) with `LIKE lower('%text%')`. Results come in
 * `(workspace, path)` order, one result page at a time after the cursor, by
 * one of two plans:
 * 1. Walk the scope in primary-key order over at most {@link headRowsFor}
 *    pages (10 per result wanted). A common text fills a result page here
 *    after a few dozen rows, instead of rechecking every page that holds it.
 * 2. Otherwise, ask the pg_trgm GIN index for the candidates (texts of three
 *    or more characters narrow them by trigram; shorter ones are rechecked
 *    row by row) and keep the first ones in order.
 * Both return the same rows. Only the pages of the result page are read
 * back to cut their matching lines into snippets.
 */

/**
 * Pages walked in key order before switching to the trigram index: ten per
 * result wanted, at least 200. A text on at least one page in ten fills the
 * result page from the head; a rarer one has few enough pages to recheck.
 */
export function headRowsFor(limit: number): number {
  return Math.max(200, 10 * (limit + 1));
}

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
  const scope: WikiSearchScope = { search: request.search, workspace, prefix: request.prefix };
  const after = request.cursor === undefined ? undefined : decodeWikiSearchCursor(request.cursor, scope);

  const values: unknown[] = [containsPattern(request.search)];
  const inScope: string[] = [];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (workspace !== undefined) inScope.push(`workspace = ${bind(workspace)}`);
  if (request.prefix !== undefined) inScope.push(`path LIKE ${bind(prefixPattern(request.prefix))} ESCAPE '\\'`);
  if (after !== undefined) inScope.push(`(workspace, path) > (${bind(after.workspace)}, ${bind(after.path)})`);
  const limitParam = bind(limit + 1);
  const match = `search_text LIKE lower($1) ESCAPE '\\'`;
  const where = (extra: string[]): string => (extra.length === 0 ? '' : `WHERE ${extra.join(' AND ')}`);
  const headSql = `SELECT workspace, path, title, content FROM (
      SELECT workspace, path, title, content, search_text FROM pages ${where(inScope)} ORDER BY workspace, path LIMIT ${bind(headRowsFor(limit))}
    ) AS head WHERE ${match} ORDER BY workspace, path LIMIT ${limitParam}`;
  const indexSql = `SELECT workspace, path, title, content FROM pages ${where([match, ...inScope])} ORDER BY workspace, path LIMIT ${limitParam}`;

  const rows = await withStorageErrors(async () => {
    if (workspace !== undefined) await requireWorkspace(pool, workspace);
    const head = (await pool.query<Record<string, unknown>>(headSql, values)).rows;
    if (head.length > limit) return head;
    // The head size is the last value bound, and the only one the index plan does not use.
    return (await pool.query<Record<string, unknown>>(indexSql, values.slice(0, -1))).rows;
  });
  const hits = rows.map((row) => HitRowSchema.parse(row));
  const hasMore = hits.length > limit;
  const shown = hasMore ? hits.slice(0, limit) : hits;
  const results = shown.map((hit) => ({
    id: hit.path,
    workspace: hit.workspace,
    uri: pageUriOf(hit.workspace, hit.path),
    title: hit.title,
    ...findLineMatches(hit.content, request.search),
  }));
  const last = shown[shown.length - 1];
  const nextCursor =
    hasMore && last !== undefined
      ? encodeWikiSearchCursor({ workspace: last.workspace, path: last.path }, scope)
      : undefined;
  return { results, hasMore, ...(nextCursor !== undefined ? { nextCursor } : {}) };
}
