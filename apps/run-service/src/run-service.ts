import { runOps, type RunOps } from '@dagu-mcp/contracts';
import { createPingHandler, type ServiceDefinition } from '@dagu-mcp/service-kit';
import { RUN_MIGRATIONS } from './db/migrations';

/** run-service: DAG-runs — the engine, schedules, queues, attempts, step states, logs. */
export const runService: ServiceDefinition<RunOps> = {
  service: 'run',
  catalog: runOps,
  migrations: RUN_MIGRATIONS,
  createHandlers: ({ replica }) => ({
    ping: createPingHandler('run-service', replica),
  }),
};
