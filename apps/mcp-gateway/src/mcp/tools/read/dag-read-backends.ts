import { DagListRequestSchema, dagOps } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { ReadBackend } from './read-backends';

/**
 * The DAG read targets of 021 (`dags`, `dag`, `dag_spec`, `dag_search`),
 * each one call to dag-service over the bus.
 */
export function createDagReadBackends(bus: BusClient): {
  dags: ReadBackend;
  dag: ReadBackend;
  dag_spec: ReadBackend;
  dag_search: ReadBackend;
} {
  return {
    dags: async (request, principal) =>
      bus.call('dag', dagOps, 'dag.list', DagListRequestSchema.parse(request.query ?? {}), { principal }),
    dag: async (request, principal) =>
      bus.call('dag', dagOps, 'dag.get', { name: request.fields.name ?? '' }, { principal }),
    dag_spec: async (request, principal) =>
      bus.call('dag', dagOps, 'dag.spec', { name: request.fields.name ?? '' }, { principal }),
    dag_search: async (request, principal) => {
      const { search, workspace, cursor, limit } = request.fields;
      return bus.call(
        'dag',
        dagOps,
        'dag.search',
        {
          search: search ?? '',
          ...(workspace !== undefined ? { workspace } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
          ...(limit !== undefined ? { limit } : {}),
        },
        { principal },
      );
    },
  };
}
