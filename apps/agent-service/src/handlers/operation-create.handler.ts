import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { createOperation } from '../rest/operation-store';

/** `operation.create` — payload `{workspace, name, title?, description?, spec}`; reply: the operation (version 1 a draft) and `boundAgents`. Errors: `conflict` (field `name`), `invalid_request` (field `spec.…`), `unauthorized`. */
export function createOperationCreateHandler(pool: Pool): OpHandler<AgentOps, 'operation.create'> {
  return async function operationCreate(payload, ctx) {
    return createOperation(pool, payload, ctx);
  };
}
