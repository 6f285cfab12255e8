import {
  DaguError,
  type WikiCheckReply,
  type WikiCheckRequest,
  type WikiRenameReply,
  type WikiRenameRequest,
} from '@dagu-mcp/contracts';
import type { Pool, PoolClient } from '@dagu-mcp/runtime';
import type { RecordMutation } from '@dagu-mcp/service-kit';
import { mutate, withStorageErrors } from '../db/storage-errors';
import { readPageFacts } from './frontmatter';
import { nameKeyOf, typeKeyOf } from './page-keys';
import { searchTextSql } from './page.records';
import { requireWorkspace } from './wiki-collection';
import { currentPage, fenceOf, lockPage, pageTarget, requireWriter, type WriteContext } from './wiki-write';

/**
 * Page moves and the checks of a page change (Dagu spec 022b
 * `rename_wiki_page` and the preview of the three wiki types).
 */

async function requirePage(client: PoolClient, workspace: string, path: string): Promise<void> {
  if ((await currentPage(client, workspace, path)) !== undefined) return;
  await requireWorkspace(client, workspace);
  throw new DaguError('resource_not_found', `Wiki page ${path} does not exist in workspace ${workspace}.`, {
    field: 'path',
  });
}

async function requireFree(client: PoolClient, workspace: string, newPath: string): Promise<void> {
  if ((await currentPage(client, workspace, newPath)) === undefined) return;
  throw new DaguError('conflict', `Wiki page ${newPath} already exists in workspace ${workspace}.`, {
    field: 'newPath',
  });
}

function samePath(path: string): DaguError {
  return new DaguError('invalid_tool_input', `The newPath field must differ from path (${path}).`, {
    field: 'newPath',
  });
}

/**
 * Moves a page to `newPath` in its workspace, in one transaction committed
 * only before the deadline; its content, title, tags and creation time stay,
 * `version` + 1. Links to it are not rewritten (022b). Recorded as
 * `wiki.page.renamed` with `details.from`.
 *
 * @throws DaguError `unauthorized` (below developer); `resource_not_found`
 *   (workspace or page); `conflict` on `newPath` when a page is there;
 *   `invalid_tool_input` on `newPath` when it equals `path`; `resource_unavailable`
 */
export async function renameWikiPage(
  pool: Pool,
  request: WikiRenameRequest,
  ctx: WriteContext,
): Promise<WikiRenameReply> {
  requireWriter(ctx.principal);
  const { workspace, path, newPath } = request;
  if (newPath === path) throw samePath(path);
  const move = async (client: PoolClient, record: RecordMutation): Promise<WikiRenameReply> => {
    for (const p of [path, newPath].sort()) await lockPage(client, workspace, p);
    const current = await currentPage(client, workspace, path);
    if (current === undefined) {
      await requirePage(client, workspace, path);
      throw new Error('unreachable: requirePage throws for a missing page');
    }
    await requireFree(client, workspace, newPath);
    // A page without a title of its own is titled by its last path segment, which may change.
    const { title } = readPageFacts(newPath, current.content);
    const moved = await client.query<{ version: number }>(
      `UPDATE pages SET path = $3, name_key = $4, type_key = $5, title = $7, search_text = ${searchTextSql('$7', 'content')},
         version = version + 1, updated_at = clock_timestamp(), updated_by = $6
       WHERE workspace = $1 AND path = $2 RETURNING version`,
      [workspace, path, newPath, nameKeyOf(newPath), typeKeyOf(newPath), ctx.principal.subject, title],
    );
    const version = moved.rows[0]?.version ?? 0;
    await record({
      action: 'wiki.page.renamed',
      target: pageTarget(workspace, newPath),
      details: { from: pageTarget(workspace, path), version },
    });
    return { workspace, path: newPath, previousPath: path, version };
  };
  return mutate(pool, fenceOf(ctx), move);
}

/**
 * The checks of a page change without the write (Dagu spec 022b preview):
 * upsert — the frontmatter is readable (a bad one is `valid: false` with the
 * message in `errors`, not an error); rename — the page exists and `newPath`
 * is free; delete — the page exists. No role is needed: preview writes nothing.
 *
 * @throws DaguError `resource_not_found`, `conflict`, `invalid_tool_input`
 *   (rename: `newPath` absent or equal to `path`), `resource_unavailable`
 */
export async function checkWikiChange(pool: Pool, request: WikiCheckRequest): Promise<WikiCheckReply> {
  const { workspace, path } = request;
  return withStorageErrors(async () => {
    const client = await pool.connect();
    try {
      const exists = (await currentPage(client, workspace, path)) !== undefined;
      if (request.kind === 'upsert') {
        try {
          readPageFacts(path, request.content ?? '');
          return { valid: true, errors: [], exists };
        } catch (error) {
          if (error instanceof DaguError) return { valid: false, errors: [error.message], exists };
          throw error;
        }
      }
      if (!exists) await requirePage(client, workspace, path);
      if (request.kind === 'rename') {
        if (request.newPath === undefined) {
          throw new DaguError('invalid_tool_input', 'The newPath field is required.', { field: 'newPath' });
        }
        if (request.newPath === path) throw samePath(path);
        await requireFree(client, workspace, request.newPath);
      }
      return { valid: true, errors: [], exists };
    } finally {
      client.release();
    }
  });
}
