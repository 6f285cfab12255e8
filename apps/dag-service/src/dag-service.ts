import { dagOps, type DagOps } from '@dagu-mcp/contracts';
import type { HandlerMap } from '@dagu-mcp/bus';
import { createPingHandler, type ServiceDefinition, type ServiceDeps } from '@dagu-mcp/service-kit';
import { DagCatalog } from './dags/dag.catalog';
import { DagRepository } from './dags/dag.repository';
import { DAG_MIGRATIONS } from './db/migrations';
import { createDagGetHandler } from './handlers/dag-get.handler';
import { createDagListHandler } from './handlers/dag-list.handler';
import { createDagSearchHandler } from './handlers/dag-search.handler';
import { createDagSpecHandler } from './handlers/dag-spec.handler';
import { createDagUpsertHandler } from './handlers/dag-upsert.handler';
import { createDagValidateHandler } from './handlers/dag-validate.handler';
import { createDagDeleteHandler } from './handlers/dag-delete.handler';
import { createDagSuspendHandler } from './handlers/dag-suspend.handler';
import { createDagSchedulesHandler } from './handlers/dag-schedules.handler';

/**
 * Builds the handler of every op of `dagOps` over one pool (the service's
 * schema is the pool's search path). Exported for tests that run the
 * handlers without the service host.
 */
export function createDagHandlers(deps: Pick<ServiceDeps, 'pool' | 'replica'>): HandlerMap<DagOps> {
  const catalog = new DagCatalog(new DagRepository(deps.pool));
  return {
    ping: createPingHandler('dag-service', deps.replica),
    'dag.validate': createDagValidateHandler(catalog),
    'dag.upsert': createDagUpsertHandler(catalog),
    'dag.list': createDagListHandler(catalog),
    'dag.get': createDagGetHandler(catalog),
    'dag.spec': createDagSpecHandler(catalog),
    'dag.search': createDagSearchHandler(catalog),
    'dag.delete': createDagDeleteHandler(catalog),
    'dag.setSuspended': createDagSuspendHandler(catalog),
    'dag.schedules': createDagSchedulesHandler(deps.pool),
  };
}

/** dag-service: DAG definitions — validation, storage, list, search, spec. */
export const dagService: ServiceDefinition<DagOps> = {
  service: 'dag',
  catalog: dagOps,
  migrations: DAG_MIGRATIONS,
  createHandlers: createDagHandlers,
};
