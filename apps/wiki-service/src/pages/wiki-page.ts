import { z } from 'zod';
import { DaguError, type WikiPage, type WikiPageRef } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { withStorageErrors } from '../db/storage-errors';
import { PAGE_COLUMNS, parsePageRow, toWikiPage } from './page.records';
import { requireWorkspace } from './wiki-collection';

/**
 * One Wiki page (spec 021 `wiki_page`, spec 020 `dagu://wiki/{workspace}/{path}`,
 * `text/markdown`).
 */

/** Suggestions offered for an unknown path, at most. */
const SUGGESTIONS = 3;
/** pg_trgm similarity a path needs to be suggested (0–1). */
const SUGGESTION_THRESHOLD = 0.3;
const PathRowSchema = z.object({ path: z.string() });

/** Paths of `workspace` that look like `path` (pg_trgm similarity), best first. */
async function similarPaths(pool: Pool, workspace: string, path: string): Promise<string[]> {
  const result = await pool.query<Record<string, unknown>>(
    `SELECT path FROM pages WHERE workspace = $1 AND similarity(path, $2) >= $3
     ORDER BY similarity(path, $2) DESC, path LIMIT $4`,
    [workspace, path, SUGGESTION_THRESHOLD, SUGGESTIONS],
  );
  return result.rows.map((row) => PathRowSchema.parse(row).path);
}

/**
 * Reads a page with its Markdown.
 *
 * @returns the spec 021 Wiki page model: `id` (the path), `content`,
 *   `mimeType: 'text/markdown'`, `uri`, plus workspace, title, tags, size,
 *   version, createdAt, updatedAt, updatedBy
 * @throws DaguError `resource_not_found` for an unknown workspace (field
 *   `workspace`) or page (field `path`, `details.didYouMean` = similar paths);
 *   `resource_unavailable` when PostgreSQL cannot serve the read
 */
export async function readWikiPage(pool: Pool, ref: WikiPageRef): Promise<WikiPage> {
  return withStorageErrors(async () => {
    const result = await pool.query<Record<string, unknown>>(
      `SELECT ${PAGE_COLUMNS} FROM pages WHERE workspace = $1 AND path = $2`,
      [ref.workspace, ref.path],
    );
    const row = result.rows[0];
    if (row !== undefined) return toWikiPage(parsePageRow(row));
    await requireWorkspace(pool, ref.workspace);
    const didYouMean = await similarPaths(pool, ref.workspace, ref.path);
    const hint = didYouMean.length === 0 ? '' : ` Did you mean: ${didYouMean.join(', ')}?`;
    throw new DaguError(
      'resource_not_found',
      `Wiki page ${ref.path} does not exist in workspace ${ref.workspace}.${hint}`,
      {
        field: 'path',
        ...(didYouMean.length === 0 ? {} : { details: { didYouMean } }),
      },
    );
  });
}
