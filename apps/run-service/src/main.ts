import { runServiceMain } from '@dagu-mcp/service-kit';
import { loadRunConfig, type RunConfig } from './config/run-config';
import { processEnvBase } from './engine/env-merge';
import { createRunService } from './run-service';

/**
 * run-service process entry point: the shared service config (service-kit)
 * and the engine config (`RUN_*`) from the environment, ops port 8082 by
 * default. The process environment is also the base of every step's
 * environment (dagu-model §3, as in Dagu), read here once.
 */
let runConfig: RunConfig;
try {
  runConfig = loadRunConfig();
} catch (error) {
  process.stderr.write(`run-service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
runServiceMain('run-service', createRunService({ runConfig, processEnv: processEnvBase(process.env) }), { schema: 'run_service', opsPort: 8082 });
