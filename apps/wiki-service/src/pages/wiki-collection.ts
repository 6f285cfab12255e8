import { DaguError, type WikiListReply, type WikiListRequest } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { withStorageErrors } from '../db/storage-errors';
import { listPageEntries, listWorkspaceNames, workspaceExists, type Queryable } from './page-list.repository';
import { toPageEntry } from './page.records';
import { buildPageTree, type WikiOrder, type WikiSort } from './page-tree';

/**
 * The Wiki collection of spec 021 (`wiki` target; `dagu://wiki` and
 * `dagu://wiki/{workspace}` of spec 020; dagu-model §7 tree and flat modes).
 */

/** Pages per collection page when `perPage` is absent (spec 021 allows 1–200). */
export const DEFAULT_PER_PAGE = 50;
/** Default `sort`: folders first, as Dagu lists its docs. */
export const DEFAULT_SORT: WikiSort = 'type';
export const DEFAULT_ORDER: WikiOrder = 'asc';
/** Workspace names listed in a `resource_not_found` error at most. */
const KNOWN_WORKSPACES_SHOWN = 50;

/** `undefined` for "every workspace" (absent or `all`, spec 021 `workspace`), else the name. */
export function selectedWorkspace(workspace: string | undefined): string | undefined {
  return workspace === undefined || workspace === 'all' ? undefined : workspace;
}

/**
 * Fails unless a page was ever written to `workspace`.
 *
 * @throws DaguError `resource_not_found` (field `workspace`, `details.workspaces`
 *   = known names, at most 50) for a workspace that does not exist
 */
export async function requireWorkspace(pool: Queryable, workspace: string): Promise<void> {
  if (await workspaceExists(pool, workspace)) return;
  const known = await listWorkspaceNames(pool, KNOWN_WORKSPACES_SHOWN);
  const list = known.length === 0 ? 'The wiki has no workspaces yet.' : `Workspaces: ${known.join(', ')}.`;
  throw new DaguError('resource_not_found', `Wiki workspace ${workspace} does not exist. ${list}`, {
    field: 'workspace',
    details: { workspaces: known },
  });
}

/**
 * Reads one page of the collection.
 *
 * Tree mode (default) returns `tree`; `flat=true` returns `items` (pages
 * only). Pagination counts pages: page `n` holds pages `(n-1)·perPage+1 …`
 * in the requested order, and its tree holds just their folders. A page past
 * the end is empty, not an error. Defaults: page 1, perPage 50, sort `type`,
 * order `asc`.
 *
 * @returns the spec 021 Wiki collection model plus `workspace`, `flat`, `sort`, `order`
 * @throws DaguError `resource_not_found` for an unknown workspace;
 *   `resource_unavailable` when PostgreSQL cannot be reached or the deadline passes
 */
export async function readWikiCollection(pool: Pool, request: WikiListRequest): Promise<WikiListReply> {
  const workspace = selectedWorkspace(request.workspace);
  const sort = request.sort ?? DEFAULT_SORT;
  const order = request.order ?? DEFAULT_ORDER;
  const page = request.page ?? 1;
  const perPage = request.perPage ?? DEFAULT_PER_PAGE;
  const flat = request.flat ?? false;
  const { records, total } = await withStorageErrors(async () => {
    if (workspace !== undefined) await requireWorkspace(pool, workspace);
    return listPageEntries(pool, { workspace, prefix: request.prefix, sort, order, page, perPage });
  });
  const pagination = { page, perPage, total, totalPages: Math.ceil(total / perPage) };
  const shown = flat
    ? { items: records.map(toPageEntry) }
    : { tree: buildPageTree(records, { allWorkspaces: workspace === undefined, sort, order }) };
  return { ...shown, pagination, ...(workspace !== undefined ? { workspace } : {}), flat, sort, order };
}
