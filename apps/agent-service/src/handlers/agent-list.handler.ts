import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { listAgents } from '../agents/agent-store';

/** `agent.list` — payload `{workspace}`; reply `{items: Agent[]}` by slug (an unknown workspace has none). */
export function createAgentListHandler(pool: Pool): OpHandler<AgentOps, 'agent.list'> {
  return async function agentList(payload) {
    return { items: await listAgents(pool, payload.workspace) };
  };
}
