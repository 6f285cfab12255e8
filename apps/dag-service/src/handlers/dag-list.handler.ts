import type { OpHandler } from '@dagu-mcp/bus';
import type { DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.list` — spec 021 `dags` (DAG collection model).
 *
 * Payload: the `dags` query as typed fields, all optional: `page` (≥ 1,
 * default 1), `perPage` (1..200, default 50), `name` (case-insensitive
 * substring), `labels` (all of), `sort` (`name` default, or `nextRun`),
 * `order` (`asc` default, or `desc`).
 *
 * Reply `{items, pagination: {page, perPage, total, totalPages}}`; each item
 * `{name, uri: dagu://dags/{name}/spec, suspended, description?, labels,
 * schedule, nextRun?, updatedAt}`. See dags/dag-list.ts for the orders.
 *
 * @throws DaguError `resource_unavailable` when PostgreSQL is unavailable.
 */
export function createDagListHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.list'> {
  return async function listDags(payload) {
    return catalog.list(payload);
  };
}

/**
 * `dag.listIfChanged` — spec 021 `dags` for a caller that keeps pages (the
 * gateway). Payload: the `dag.list` query plus `ifNoneMatch`, the
 * tag of the caller's copy. Reply `{etag, page?}`: `page` as `dag.list`
 * replies it, absent when `ifNoneMatch` equals the page's tag.
 *
 * @throws DaguError `resource_unavailable` when PostgreSQL is unavailable.
 */
export function createDagListIfChangedHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.listIfChanged'> {
  return async function listDagsIfChanged(payload) {
    return catalog.listIfChanged(payload);
  };
}
