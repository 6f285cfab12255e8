import { runServiceMain, serviceConfigSchema } from '@dagu-mcp/service-kit';
import { loadRunConfig, runConfigSchema, type RunConfig } from './config/run-config';
import { processEnvBase } from './core/env-merge';
import { createRunService } from './run-service';

/**
 * run-service process entry point: the shared service config (service-kit)
 * and the engine config (`RUN_*`) from the environment, ops port 8082 by
 * default. The process environment is also the base of every step's
 * environment (dagu-model §3, as in Dagu), read here once — without the
 * service's own configuration variables (database and Redis URLs, …).
 */
const DEFAULTS = { schema: 'run_service', opsPort: 8082 };
const SERVICE_VARIABLES = [
  ...Object.keys(serviceConfigSchema(DEFAULTS).shape),
  ...Object.keys(runConfigSchema().shape),
];
let runConfig: RunConfig;
try {
  runConfig = loadRunConfig();
} catch (error) {
  process.stderr.write(`run-service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const processEnv = processEnvBase(process.env, SERVICE_VARIABLES);
runServiceMain('run-service', createRunService({ runConfig, processEnv }), DEFAULTS);
