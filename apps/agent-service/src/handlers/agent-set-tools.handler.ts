import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { setAgentTools } from '../agents/agent-store';

/**
 * `agent.setTools` — payload `{workspace, slug, tools: AgentBinding[]}`
 * replaces the catalog; reply: the agent with its stored bindings. Errors:
 * `conflict` (two bindings, one tool name; field `tools[i].name`),
 * `resource_not_found`, `unauthorized` (below manager).
 */
export function createAgentSetToolsHandler(pool: Pool): OpHandler<AgentOps, 'agent.setTools'> {
  return async function agentSetTools(payload, ctx) {
    return setAgentTools(pool, payload, ctx);
  };
}
