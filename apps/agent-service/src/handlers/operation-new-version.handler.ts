import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { newOperationVersion } from '../rest/operation-store';

/** `operation.newVersion` — payload `{workspace, name, spec?}`; reply: the operation with the new draft and `boundAgents`. Errors: `conflict` (field `version`: a draft exists), `resource_not_found`, `invalid_request`, `unauthorized`. */
export function createOperationNewVersionHandler(pool: Pool): OpHandler<AgentOps, 'operation.newVersion'> {
  return async function operationNewversion(payload, ctx) {
    return newOperationVersion(pool, payload, ctx);
  };
}
