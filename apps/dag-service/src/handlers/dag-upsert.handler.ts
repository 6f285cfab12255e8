import type { OpHandler } from '@dagu-mcp/bus';
import { requireMutationRole, type DagOps } from '@dagu-mcp/contracts';
import type { DagCatalog } from '../dags/dag.catalog';

/**
 * `dag.upsert` — spec 022 apply (`mode=apply`, `type=upsert_dag`).
 *
 * Payload `{name, spec}` (the YAML exactly as given). Reply:
 * - invalid spec: `{valid: false, errors, applied: false}`; nothing written;
 * - valid: `{valid: true, errors: [], dag, applied: true, created, updated,
 *   version}` — `created` for a new DAG, `updated` for an existing one,
 *   `version` the stored version (1 on create, +1 per apply).
 *
 * The write commits only before the request's deadline (docs/architecture.md
 * "Request flow"); concurrent applies of one name serialize, last writer wins.
 *
 * @throws DaguError `resource_unavailable` (deadline passed or PostgreSQL
 *   unavailable; nothing written), `invalid_tool_input` on `name`.
 */
export function createDagUpsertHandler(catalog: DagCatalog): OpHandler<DagOps, 'dag.upsert'> {
  return async function upsertDag(payload, ctx) {
    requireMutationRole(ctx.principal, 'dag.upsert');
    ctx.assertBeforeDeadline();
    const reply = await catalog.upsert(payload, ctx.deadline, ctx);
    if (reply.applied) {
      ctx.logger.info({ dag: payload.name, version: reply.version, created: reply.created }, 'DAG applied');
    }
    return reply;
  };
}
