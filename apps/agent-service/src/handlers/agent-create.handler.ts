import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { createAgent } from '../agents/agent-store';

/**
 * `agent.create` — payload `{workspace, slug, title, description?, state?}`
 * (state default `draft`); reply: the agent. Errors: `conflict` (field
 * `slug`), `unauthorized` (below manager).
 */
export function createAgentCreateHandler(pool: Pool): OpHandler<AgentOps, 'agent.create'> {
  return async function agentCreate(payload, ctx) {
    return createAgent(pool, payload, ctx);
  };
}
