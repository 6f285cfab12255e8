import { runServiceMain } from '@dagu-mcp/service-kit';
import { loadDagConfig, type DagConfig } from './config/dag-config';
import { createDagService } from './dag-service';

/**
 * dag-service process entry point: the shared service config (service-kit)
 * and the dag-service config (`DAG_*`) from the environment, ops port 8081
 * by default. A bad `DAG_*` variable stops the start with the reason on stderr.
 */
let dagConfig: DagConfig;
try {
  dagConfig = loadDagConfig();
} catch (error) {
  process.stderr.write(`dag-service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
runServiceMain('dag-service', createDagService({ dagConfig }), { schema: 'dag_service', opsPort: 8081 });
