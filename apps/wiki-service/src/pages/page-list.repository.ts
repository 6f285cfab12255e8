import { z } from 'zod';
import type { Pool, PoolClient } from '@dagu-mcp/runtime';
import { prefixPattern } from './page-keys';
import { ENTRY_COLUMNS, parseEntryRow, type PageEntryRecord } from './page.records';
import type { WikiOrder, WikiSort } from './page-tree';

/**
 * Reads for the wiki collection (spec 021 `wiki`): one page of listed pages
 * in the requested order, the total they are paged from, and which
 * workspaces exist. All ordering and paging happens in PostgreSQL.
 */

/** What one collection page is selected by. `workspace` undefined = every workspace. */
export interface PageListQuery {
  workspace: string | undefined;
  prefix: string | undefined;
  sort: WikiSort;
  order: WikiOrder;
  /** 1-based page number. */
  page: number;
  /** Pages (leaves) per collection page, 1–200. */
  perPage: number;
}

/**
 * ORDER BY columns per sort, for one workspace and for all. The key columns
 * are unique within a workspace, so every order is total and pages never
 * overlap; `mtime` breaks ties by identity.
 */
const ORDER_COLUMNS: Readonly<Record<WikiSort, { one: readonly string[]; all: readonly string[] }>> = {
  name: { one: ['name_key'], all: ['workspace', 'name_key'] },
  type: { one: ['type_key'], all: ['workspace', 'type_key'] },
  mtime: { one: ['updated_at', 'path'], all: ['updated_at', 'workspace', 'path'] },
};

const CountRowSchema = z.object({ total: z.number().int() });
const NameRowSchema = z.object({ name: z.string() });

/** The WHERE clause and its values; only whitelisted SQL, values always bound. */
export function listFilter(
  workspace: string | undefined,
  prefix: string | undefined,
): { where: string; values: string[] } {
  const conditions: string[] = [];
  const values: string[] = [];
  if (workspace !== undefined) {
    values.push(workspace);
    conditions.push(`workspace = $${values.length}`);
  }
  if (prefix !== undefined) {
    // `path` is in every listing index, so the filter is checked on index entries.
    values.push(prefixPattern(prefix));
    conditions.push(`path LIKE $${values.length} ESCAPE '\\'`);
  }
  return { where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, values };
}

/**
 * One collection page and the number of pages matching in all.
 *
 * A deferred join: the inner query pages through the sort's index alone
 * (index-only: OFFSET skips index entries, not heap rows), the outer one
 * fetches the `perPage` rows it picked by primary key and restores the order.
 *
 * @returns `records` in the requested order (at most `perPage`) and `total`
 * @throws pg errors (the caller classifies them)
 */
export async function listPageEntries(
  pool: Pool,
  query: PageListQuery,
): Promise<{ records: PageEntryRecord[]; total: number }> {
  const { where, values } = listFilter(query.workspace, query.prefix);
  const direction = query.order === 'asc' ? 'ASC' : 'DESC';
  const columns = ORDER_COLUMNS[query.sort][query.workspace === undefined ? 'all' : 'one'];
  const orderBy = columns.map((column) => `${column} ${direction}`).join(', ');
  const limit = values.length + 1;
  const keys = `SELECT workspace, path FROM pages ${where} ORDER BY ${orderBy} LIMIT $${limit} OFFSET $${limit + 1}`;
  const pageSql = `SELECT ${ENTRY_COLUMNS} FROM pages JOIN (${keys}) AS picked USING (workspace, path) ORDER BY ${orderBy}`;
  const [page, count] = await Promise.all([
    pool.query<Record<string, unknown>>(pageSql, [...values, query.perPage, (query.page - 1) * query.perPage]),
    pool.query<Record<string, unknown>>(`SELECT count(*)::int AS total FROM pages ${where}`, values),
  ]);
  return { records: page.rows.map(parseEntryRow), total: CountRowSchema.parse(count.rows[0]).total };
}

/** A pool, or one client of it inside a transaction. */
export type Queryable = Pool | PoolClient;

/** True when a page was ever written to `workspace`. */
export async function workspaceExists(pool: Queryable, workspace: string): Promise<boolean> {
  const result = await pool.query('SELECT 1 FROM workspaces WHERE name = $1', [workspace]);
  return (result.rowCount ?? 0) > 0;
}

/** Workspace names in order, at most `limit` (for `resource_not_found` details). */
export async function listWorkspaceNames(pool: Queryable, limit: number): Promise<string[]> {
  const result = await pool.query<Record<string, unknown>>('SELECT name FROM workspaces ORDER BY name LIMIT $1', [
    limit,
  ]);
  return result.rows.map((row) => NameRowSchema.parse(row).name);
}
