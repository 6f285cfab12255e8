import {
  DaguError,
  formatDaguUri,
  roleAtLeast,
  type Principal,
  type WikiDeleteReply,
  type WikiDeleteRequest,
  type WikiPutReply,
  type WikiPutRequest,
} from '@dagu-mcp/contracts';
import type { MutationAuthor, Pool, PoolClient } from '@dagu-mcp/runtime';
import type { MutationFence, RecordMutation } from '@dagu-mcp/service-kit';
import { mutate } from '../db/storage-errors';
import { readPageFacts } from './frontmatter';
import { nameKeyOf, typeKeyOf } from './page-keys';
import {
  META_COLUMNS,
  PAGE_COLUMNS,
  searchTextSql,
  parseMetaRow,
  parsePageRow,
  toPageMeta,
  type PageRecord,
} from './page.records';
import { requireWorkspace } from './wiki-collection';

/**
 * Page writes (REST `PUT` / `DELETE /api/v1/wiki/{workspace}/pages/{path}`).
 *
 * Each write is one transaction that commits only before the request's
 * deadline (docs/architecture.md "Request flow": a caller told "failed" never finds
 * the change applied later; the transaction also bounds every statement by
 * the time left). Writers of one page are serialized by a transaction-level
 * advisory lock on the page's identity, so the version check and the write
 * are atomic and two concurrent creates cannot both "create". Writing the
 * same content again changes nothing, so a retried write is harmless
 * (CONTRIBUTING §6).
 */

/**
 * Who writes, and until when (epoch ms). With a `jobId` (the bus handler
 * context) each change is recorded with its author in its own transaction
 * (mutation record and audit outbox); tests of the store alone omit it.
 */
export interface WriteContext extends Omit<MutationAuthor, 'jobId'> {
  principal: Principal;
  deadline: number;
  jobId?: string;
}

/** The fence of a change by `ctx`: its deadline, and its author when it is a bus job's. */
export function fenceOf(ctx: WriteContext): MutationFence {
  return { deadline: ctx.deadline, author: ctx.jobId === undefined ? undefined : { ...ctx, jobId: ctx.jobId } };
}

/** The audit target of a page: its URI (`dagu://wiki/{workspace}/{path}`). */
export function pageTarget(workspace: string, path: string): string {
  return formatDaguUri({ kind: 'wiki_page', workspace, path });
}

/**
 * @throws DaguError `unauthorized` unless the principal is `developer` or
 *   higher (dagu-model §9: wiki writes are developer and up)
 */
export function requireWriter(principal: Principal): void {
  if (!roleAtLeast(principal.role, 'developer')) {
    throw new DaguError('unauthorized', 'Writing wiki pages needs the developer role or higher.');
  }
}

/** Locks one page's identity until the transaction ends (lock two in path order: no deadlock). */
export async function lockPage(client: PoolClient, workspace: string, path: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `dagu-mcp:wiki-page:${workspace}/${path}`,
  ]);
}

export async function currentPage(
  client: PoolClient,
  workspace: string,
  path: string,
): Promise<PageRecord | undefined> {
  const result = await client.query<Record<string, unknown>>(
    `SELECT ${PAGE_COLUMNS} FROM pages WHERE workspace = $1 AND path = $2`,
    [workspace, path],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : parsePageRow(row);
}

/** `conflict` unless the page's version (0 = absent) is the one the caller expected. */
function checkVersion(expected: number | undefined, current: number, label: string): void {
  if (expected === undefined || expected === current) return;
  const state = current === 0 ? 'does not exist' : expected === 0 ? 'already exists' : `is at version ${current}`;
  throw new DaguError(
    'conflict',
    `Wiki page ${label} ${state}; expected ${expected === 0 ? 'no page' : `version ${expected}`}.`,
    {
      field: 'expectedVersion',
      details: { currentVersion: current },
    },
  );
}

/**
 * Creates or replaces a page; title and tags come from its frontmatter.
 *
 * @returns the page's metadata; `created` for a new page; `changed` false
 *   when the stored content was already identical (nothing written)
 * @throws DaguError `unauthorized` (role below developer); `invalid_tool_input`
 *   (field `content`) for bad frontmatter; `conflict` (field `expectedVersion`,
 *   `details.currentVersion`, 0 = absent) when `expectedVersion` does not
 *   match; `resource_unavailable` when the deadline passes or PostgreSQL is down
 */
export async function putWikiPage(pool: Pool, request: WikiPutRequest, ctx: WriteContext): Promise<WikiPutReply> {
  requireWriter(ctx.principal);
  const { workspace, path, content } = request;
  const facts = readPageFacts(path, content);
  const size = Buffer.byteLength(content, 'utf8');
  const label = `${workspace}/${path}`;
  // Times are clock_timestamp(), taken after the page lock: now() is the transaction's start, before
  // the wait, and a write that waited behind another could get an older updated_at than the version before it.
  const write = async (client: PoolClient, record: RecordMutation): Promise<WikiPutReply> => {
    await lockPage(client, workspace, path);
    const current = await currentPage(client, workspace, path);
    checkVersion(request.expectedVersion, current?.version ?? 0, label);
    if (current !== undefined && current.content === content) {
      return { page: toPageMeta(current), created: false, changed: false };
    }
    if (current === undefined) {
      await client.query('INSERT INTO workspaces (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [workspace]);
      const inserted = await client.query<Record<string, unknown>>(
        `INSERT INTO pages (workspace, path, name_key, type_key, content, title, tags, size, updated_by, search_text, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, ${searchTextSql('$6', '$5')}, clock_timestamp(), clock_timestamp()) RETURNING ${META_COLUMNS}`,
        [
          workspace,
          path,
          nameKeyOf(path),
          typeKeyOf(path),
          content,
          facts.title,
          facts.tags,
          size,
          ctx.principal.subject,
        ],
      );
      const page = toPageMeta(parseMetaRow(inserted.rows[0]));
      await record({
        action: 'wiki.page.upserted',
        target: pageTarget(workspace, path),
        details: { created: true, version: page.version },
      });
      return { page, created: true, changed: true };
    }
    const updated = await client.query<Record<string, unknown>>(
      `UPDATE pages SET content = $3, title = $4, tags = $5, size = $6, version = version + 1,
         updated_at = clock_timestamp(), updated_by = $7, search_text = ${searchTextSql('$4', '$3')}
       WHERE workspace = $1 AND path = $2 RETURNING ${META_COLUMNS}`,
      [workspace, path, content, facts.title, facts.tags, size, ctx.principal.subject],
    );
    const page = toPageMeta(parseMetaRow(updated.rows[0]));
    await record({
      action: 'wiki.page.upserted',
      target: pageTarget(workspace, path),
      details: { created: false, version: page.version },
    });
    return { page, created: false, changed: true };
  };
  return mutate(pool, fenceOf(ctx), write);
}

/**
 * Deletes a page.
 *
 * @returns the deleted page's workspace, path and last version
 * @throws DaguError `unauthorized` (role below developer); `resource_not_found`
 *   for an unknown workspace or page; `conflict` when `expectedVersion` does
 *   not match; `resource_unavailable` when the deadline passes or PostgreSQL is down
 */
export async function deleteWikiPage(
  pool: Pool,
  request: WikiDeleteRequest,
  ctx: WriteContext,
): Promise<WikiDeleteReply> {
  requireWriter(ctx.principal);
  const { workspace, path } = request;
  const remove = async (client: PoolClient, record: RecordMutation): Promise<WikiDeleteReply> => {
    await lockPage(client, workspace, path);
    const current = await currentPage(client, workspace, path);
    if (current === undefined) {
      await requireWorkspace(client, workspace);
      throw new DaguError('resource_not_found', `Wiki page ${path} does not exist in workspace ${workspace}.`, {
        field: 'path',
      });
    }
    checkVersion(request.expectedVersion, current.version, `${workspace}/${path}`);
    await client.query('DELETE FROM pages WHERE workspace = $1 AND path = $2', [workspace, path]);
    await record({
      action: 'wiki.page.deleted',
      target: pageTarget(workspace, path),
      details: { version: current.version },
    });
    return { workspace, path, version: current.version };
  };
  return mutate(pool, fenceOf(ctx), remove);
}
