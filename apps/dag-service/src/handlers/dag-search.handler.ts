import type { OpHandler } from '@dagu-mcp/bus';
import type { DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.search` — spec 021 `dag_search` (DAG search model).
 *
 * Payload `{search, workspace?, cursor?, limit?}`: `workspace` absent or
 * `all` = every DAG, else the DAGs labelled `workspace=<it>`; `limit` 1..50,
 * default 10. Reply `{results: [{name, uri, matches: [{line, text}],
 * hasMoreMatches}], hasMore, nextCursor?}`, results ordered by name, up to 5
 * matching lines each. See dags/dag-search.ts.
 *
 * @throws DaguError `invalid_tool_input` on `cursor` for a cursor this search
 *   did not issue; `resource_unavailable` when PostgreSQL is unavailable.
 */
export function createDagSearchHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.search'> {
  return async function searchDags(payload) {
    return catalog.search(payload);
  };
}
