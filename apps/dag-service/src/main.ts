import { runServiceMain } from '@dagu-mcp/service-kit';
import { dagService } from './dag-service';

/** dag-service process entry point: config from the environment, ops port 8081 by default. */
runServiceMain('dag-service', dagService, { schema: 'dag_service', opsPort: 8081 });
