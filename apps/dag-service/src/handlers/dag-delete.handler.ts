import type { OpHandler } from '@dagu-mcp/bus';
import { requireMutationRole, type DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.delete` — REST `DELETE /api/v1/dags/{name}`. Payload `{name}`; reply
 * `{name, deleted: true}`. Runs of the DAG keep running and stay readable.
 *
 * @throws DaguError `resource_not_found` (with `details.didYouMean`),
 *   `resource_unavailable` (deadline passed: nothing deleted).
 */
export function createDagDeleteHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.delete'> {
  return async function deleteDag(payload, ctx) {
    requireMutationRole(ctx.principal, 'dag.delete');
    ctx.assertBeforeDeadline();
    const reply = await catalog.delete(payload.name, ctx.deadline, ctx);
    ctx.logger.info({ dag: payload.name }, 'DAG deleted');
    return reply;
  };
}
