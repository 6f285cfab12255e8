import { runServiceMain } from '@dagu-mcp/service-kit';
import { createAgentService } from './agent-service';
import { loadAgentConfig, type AgentConfig } from './config/agent-config';

/**
 * agent-service process entry point: the shared service config (service-kit)
 * and agent-service's own (`DAGU_ENCRYPTION_KEY`, `OUTBOUND_ALLOW_CIDRS`) from the environment, ops
 * port 8084 by default. A bad variable stops the start with the reason on stderr.
 */
let agentConfig: AgentConfig;
try {
  agentConfig = loadAgentConfig();
} catch (error) {
  process.stderr.write(`agent-service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
runServiceMain('agent-service', createAgentService({ agentConfig }), { schema: 'agent_service', opsPort: 8084 });
