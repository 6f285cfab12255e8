import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { updateOperation } from '../rest/operation-store';

/** `operation.update` — payload `{workspace, name, title?, description?, spec?}`; reply: the operation and `boundAgents`. Errors: `conflict` (field `spec`: the latest version is published), `resource_not_found`, `invalid_request`, `unauthorized`. */
export function createOperationUpdateHandler(pool: Pool): OpHandler<AgentOps, 'operation.update'> {
  return async function operationUpdate(payload, ctx) {
    return updateOperation(pool, payload, ctx);
  };
}
