import { agentOps, type AgentOps } from '@dagu-mcp/contracts';
import {
  createPingHandler,
  createSecretSource,
  isLoopbackDatabase,
  type ServiceDefinition,
} from '@dagu-mcp/service-kit';
import { AddressRanges } from '@dagu-mcp/runtime';
import type { AgentConfig } from './config/agent-config';
import { AGENT_MIGRATIONS } from './db/migrations';
import { createAgentCreateHandler } from './handlers/agent-create.handler';
import { createAgentDeleteHandler } from './handlers/agent-delete.handler';
import { createAgentGetHandler } from './handlers/agent-get.handler';
import { createAgentListHandler } from './handlers/agent-list.handler';
import { createAgentSetToolsHandler } from './handlers/agent-set-tools.handler';
import { createAgentUpdateHandler } from './handlers/agent-update.handler';
import { createOperationCallHandler } from './handlers/operation-call.handler';
import { createOperationCreateHandler } from './handlers/operation-create.handler';
import { createOperationDeleteHandler } from './handlers/operation-delete.handler';
import { createOperationGetHandler } from './handlers/operation-get.handler';
import { createOperationImportHandler } from './handlers/operation-import.handler';
import { createOperationListHandler } from './handlers/operation-list.handler';
import { createOperationNewVersionHandler } from './handlers/operation-new-version.handler';
import { createOperationPublishHandler } from './handlers/operation-publish.handler';
import { createOperationToolHandler } from './handlers/operation-tool.handler';
import { createOperationUpdateHandler } from './handlers/operation-update.handler';
import { createUpstreamDeleteHandler } from './handlers/upstream-delete.handler';
import { createUpstreamGetHandler } from './handlers/upstream-get.handler';
import { createUpstreamListHandler } from './handlers/upstream-list.handler';
import { createUpstreamPutHandler } from './handlers/upstream-put.handler';
import { OperationCaller } from './rest/operation-call';

/**
 * agent-service: published agents per workspace and their catalogs,
 * and REST operations as tools — upstreams with encrypted credentials,
 * operations with versions, and the upstream calls.
 */
export function createAgentService(options: { agentConfig: AgentConfig }): ServiceDefinition<AgentOps> {
  return {
    service: 'agent',
    catalog: agentOps,
    migrations: AGENT_MIGRATIONS,
    createHandlers: ({ replica, pool, config, logger }) => {
      const secrets = createSecretSource({
        keyRing: options.agentConfig.encryptionKey,
        loopback: isLoopbackDatabase(config.DATABASE_URL),
        logger,
        secrets: 'upstream credentials',
        unavailable: 'Upstream credentials are unavailable on agent-service',
      });
      const caller = new OperationCaller({
        pool,
        secrets,
        logger,
        reachable: {
          ranges: options.agentConfig.outboundAllowCidrs ?? AddressRanges.NONE,
          setting: 'OUTBOUND_ALLOW_CIDRS',
        },
      });
      return {
        ping: createPingHandler('agent-service', replica),
        'agent.list': createAgentListHandler(pool),
        'agent.get': createAgentGetHandler(pool),
        'agent.create': createAgentCreateHandler(pool),
        'agent.update': createAgentUpdateHandler(pool),
        'agent.delete': createAgentDeleteHandler(pool),
        'agent.setTools': createAgentSetToolsHandler(pool),
        'upstream.list': createUpstreamListHandler(pool),
        'upstream.get': createUpstreamGetHandler(pool),
        'upstream.put': createUpstreamPutHandler(pool, secrets),
        'upstream.delete': createUpstreamDeleteHandler(pool),
        'operation.list': createOperationListHandler(pool),
        'operation.get': createOperationGetHandler(pool),
        'operation.create': createOperationCreateHandler(pool),
        'operation.update': createOperationUpdateHandler(pool),
        'operation.delete': createOperationDeleteHandler(pool),
        'operation.newVersion': createOperationNewVersionHandler(pool),
        'operation.publish': createOperationPublishHandler(pool),
        'operation.import': createOperationImportHandler(pool),
        'operation.tool': createOperationToolHandler(pool),
        'operation.call': createOperationCallHandler(caller),
      };
    },
  };
}
