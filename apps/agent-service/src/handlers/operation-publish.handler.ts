import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { publishOperationVersion } from '../rest/operation-store';

/** `operation.publish` — payload `{workspace, name, version}`; reply: the operation and `boundAgents` (to announce). Errors: `resource_not_found` (field `version`), `invalid_request` (field `spec.upstream`), `unauthorized`. */
export function createOperationPublishHandler(pool: Pool): OpHandler<AgentOps, 'operation.publish'> {
  return async function operationPublish(payload, ctx) {
    return publishOperationVersion(pool, payload, ctx);
  };
}
