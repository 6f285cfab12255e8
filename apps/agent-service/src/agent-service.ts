import { agentOps, type AgentOps } from '@dagu-mcp/contracts';
import { createPingHandler, type ServiceDefinition } from '@dagu-mcp/service-kit';
import { AGENT_MIGRATIONS } from './db/migrations';
import { createAgentCreateHandler } from './handlers/agent-create.handler';
import { createAgentDeleteHandler } from './handlers/agent-delete.handler';
import { createAgentGetHandler } from './handlers/agent-get.handler';
import { createAgentListHandler } from './handlers/agent-list.handler';
import { createAgentSetToolsHandler } from './handlers/agent-set-tools.handler';
import { createAgentUpdateHandler } from './handlers/agent-update.handler';

/** agent-service: published agents per workspace and their catalogs (issue 24). */
export const agentService: ServiceDefinition<AgentOps> = {
  service: 'agent',
  catalog: agentOps,
  migrations: AGENT_MIGRATIONS,
  createHandlers: ({ replica, pool }) => ({
    ping: createPingHandler('agent-service', replica),
    'agent.list': createAgentListHandler(pool),
    'agent.get': createAgentGetHandler(pool),
    'agent.create': createAgentCreateHandler(pool),
    'agent.update': createAgentUpdateHandler(pool),
    'agent.delete': createAgentDeleteHandler(pool),
    'agent.setTools': createAgentSetToolsHandler(pool),
  }),
};
