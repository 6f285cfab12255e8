import { runServiceMain } from '@dagu-mcp/service-kit';
import { runService } from './run-service';

/** run-service process entry point: config from the environment, ops port 8082 by default. */
runServiceMain('run-service', runService, { schema: 'run_service', opsPort: 8082 });
