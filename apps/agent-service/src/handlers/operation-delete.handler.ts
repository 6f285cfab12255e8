import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { deleteOperation } from '../rest/operation-store';

/** `operation.delete` — payload `{workspace, name}`; reply `{name, deleted, boundAgents}`. Errors: `resource_not_found`, `unauthorized`. */
export function createOperationDeleteHandler(pool: Pool): OpHandler<AgentOps, 'operation.delete'> {
  return async function operationDelete(payload, ctx) {
    return deleteOperation(pool, payload, ctx);
  };
}
