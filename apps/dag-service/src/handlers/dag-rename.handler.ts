import type { OpHandler } from '@dagu-mcp/bus';
import { requireMutationRole, type DagOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.rename` — Dagu spec 022b `rename_dag` apply. Payload `{name,
 * newName}`; reply `{name: newName, previousName, renamed: true}`. The
 * definition (spec, schedule, labels, suspension) moves in one transaction;
 * the run history follows through the outbox (dag-rename.ts). Whether a run
 * is active is checked by the caller first (the gateway asks run-service).
 *
 * @throws DaguError `unauthorized` (below developer), `resource_not_found`
 *   (with `details.didYouMean`), `conflict` on `newName`, `resource_unavailable`.
 */
export function createDagRenameHandler(catalog: DagCatalog, pool: Pool): OpHandler<DagOps, 'dag.rename'> {
  return async function renameDag(payload, ctx) {
    requireMutationRole(ctx.principal, 'dag.rename');
    ctx.assertBeforeDeadline();
    const reply = await catalog.rename(pool, payload.name, payload.newName, ctx.deadline, ctx);
    ctx.logger.info({ dag: payload.newName, previous: payload.name }, 'DAG renamed');
    return reply;
  };
}
