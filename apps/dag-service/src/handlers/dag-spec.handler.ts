import type { OpHandler } from '@dagu-mcp/bus';
import type { DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.spec` — spec 021 `dag_spec`, the resource `dagu://dags/{name}/spec`.
 *
 * Payload `{name}`. Reply `{name, mimeType: 'application/yaml', spec,
 * errors}`: `spec` is the YAML exactly as applied, `errors` what validating
 * it today reports (normally `[]`).
 *
 * @throws DaguError `resource_not_found` with `details.didYouMean` as
 *   `dag.get`; `invalid_tool_input` on `name`; `resource_unavailable`.
 */
export function createDagSpecHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.spec'> {
  return async function readDagSpec(payload) {
    return catalog.spec(payload.name);
  };
}
