import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { getOperation } from '../rest/operation-store';

/** `operation.get` — payload `{workspace, name}`; reply: the operation with its versions, newest first. Errors: `resource_not_found`. */
export function createOperationGetHandler(pool: Pool): OpHandler<AgentOps, 'operation.get'> {
  return async function operationGet(payload) {
    return getOperation(pool, payload);
  };
}
