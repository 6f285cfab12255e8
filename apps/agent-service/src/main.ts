import { runServiceMain } from '@dagu-mcp/service-kit';
import { agentService } from './agent-service';

/** agent-service process entry point: config from the environment, ops port 8084 by default. */
runServiceMain('agent-service', agentService, { schema: 'agent_service', opsPort: 8084 });
