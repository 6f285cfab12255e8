import type { OpHandler } from '@dagu-mcp/bus';
import type { DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.get` — spec 021 `dag` (DAG detail model).
 *
 * Payload `{name}`. Reply `{name, specUri: dagu://dags/{name}/spec,
 * suspended, description?, labels, schedule, nextRun?, version, createdAt,
 * updatedAt, dag}` (`dag`: the normalized model; timestamps RFC 3339 ms UTC).
 *
 * @throws DaguError `resource_not_found` with message `DAG "<name>" does not
 *   exist.` and `details.didYouMean` (up to 3 close names, spec 036) when
 *   any is close; `invalid_tool_input` on `name`; `resource_unavailable`.
 */
export function createDagGetHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.get'> {
  return async function getDag(payload) {
    return catalog.get(payload.name);
  };
}
