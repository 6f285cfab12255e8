import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { updateAgent } from '../agents/agent-store';

/**
 * `agent.update` — payload `{workspace, slug, title?, description?, state?}`;
 * reply: the agent. Errors: `resource_not_found`, `unauthorized` (below manager).
 */
export function createAgentUpdateHandler(pool: Pool): OpHandler<AgentOps, 'agent.update'> {
  return async function agentUpdate(payload, ctx) {
    return updateAgent(pool, payload, ctx);
  };
}
