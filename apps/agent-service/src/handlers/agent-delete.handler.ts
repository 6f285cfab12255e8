import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { deleteAgent } from '../agents/agent-store';

/**
 * `agent.delete` — payload `{workspace, slug}`; reply `{id, deleted: true}`.
 * Errors: `resource_not_found`, `unauthorized` (below manager).
 */
export function createAgentDeleteHandler(pool: Pool): OpHandler<AgentOps, 'agent.delete'> {
  return async function agentDelete(payload, ctx) {
    return deleteAgent(pool, payload, ctx);
  };
}
