import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { listOperations } from '../rest/operation-store';

/** `operation.list` — payload `{workspace}`; reply `{items}` (summaries with `latestVersion`, `publishedVersion`). */
export function createOperationListHandler(pool: Pool): OpHandler<AgentOps, 'operation.list'> {
  return async function operationList(payload) {
    return { items: await listOperations(pool, payload.workspace) };
  };
}
