import { dagOps, type DagOps } from '@dagu-mcp/contracts';
import { createPingHandler, type ServiceDefinition } from '@dagu-mcp/service-kit';
import { DAG_MIGRATIONS } from './db/migrations';

/** dag-service: DAG definitions — validation, storage, list, search, spec. */
export const dagService: ServiceDefinition<DagOps> = {
  service: 'dag',
  catalog: dagOps,
  migrations: DAG_MIGRATIONS,
  createHandlers: ({ replica }) => ({
    ping: createPingHandler('dag-service', replica),
  }),
};
