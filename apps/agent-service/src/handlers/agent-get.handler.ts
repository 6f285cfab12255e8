import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { getAgent } from '../agents/agent-store';

/**
 * `agent.get` — payload `{workspace, slug}`; reply: the agent with its
 * catalog (`tools`, stored bindings), whatever its state. Errors:
 * `resource_not_found` (field `agent`).
 */
export function createAgentGetHandler(pool: Pool): OpHandler<AgentOps, 'agent.get'> {
  return async function agentGet(payload) {
    return getAgent(pool, payload);
  };
}
