import type { OpHandler } from '@dagu-mcp/bus';
import type { DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.validate` — spec 022 preview (`mode=preview`, also the validation
 * step of `dagu_execute` inline specs, spec 036).
 *
 * Payload `{name, spec}`; reply `{valid, errors, errorLocations?, dag?}`: `errors` are the
 * dagu-model §4 strings, `dag` the normalized model when valid. Never writes,
 * so any role may call it (dagu-model §10).
 *
 * @throws DaguError `invalid_tool_input` on `name` for a name that breaks dagu-model §2.
 */
export function createDagValidateHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.validate'> {
  return async function validateDag(payload) {
    return catalog.validate(payload);
  };
}
