import type { OpHandler } from '@dagu-mcp/bus';
import { requireMutationRole, type DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.setSuspended` — REST `POST /api/v1/dags/{name}/suspend|resume`.
 * Payload `{name, suspended}`; reply the DAG detail model (021 `dag`).
 *
 * @throws DaguError `resource_not_found`, `resource_unavailable` (deadline passed: nothing changed).
 */
export function createDagSuspendHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.setSuspended'> {
  return async function setSuspended(payload, ctx) {
    requireMutationRole(ctx.principal, 'dag.setSuspended');
    ctx.assertBeforeDeadline();
    return catalog.setSuspended(payload.name, payload.suspended, ctx.deadline, ctx);
  };
}
