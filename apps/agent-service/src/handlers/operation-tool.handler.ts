import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { operationTool } from '../rest/operation-call';

/** `operation.tool` — payload `{workspace, name, version}` (`latest` or a number); reply: the tool definition of a published version. Errors: `resource_not_found` (no such published version; a draft is never answered). */
export function createOperationToolHandler(pool: Pool): OpHandler<AgentOps, 'operation.tool'> {
  return async function operationToolHandler(payload) {
    return operationTool(pool, payload);
  };
}
