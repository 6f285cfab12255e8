import { DagListRequestSchema } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { getDag, getDagProfile, getDagSpec, listDagsIfChanged, searchDags } from '../../../actions/dag-reads.actions';
import type { ReadBackend } from './read-backends';
import { DagPageMemo } from './dag-page-memo';

/**
 * The DAG read targets of 021 (`dags`, `dag`, `dag_spec`, `dag_search`) and
 * 022b's `dag_profile`, each one action of actions/dag-reads.actions.ts.
 * `dags` pages go through the replica's {@link DagPageMemo}
 * (`dag.listIfChanged`: the page travels only when it changed).
 */
export function createDagReadBackends(
  bus: BusClient,
  pages = new DagPageMemo(),
): {
  dags: ReadBackend;
  dag: ReadBackend;
  dag_spec: ReadBackend;
  dag_search: ReadBackend;
  dag_profile: ReadBackend;
} {
  return {
    dags: async (request, principal) =>
      listDagsIfChanged(bus, principal, DagListRequestSchema.parse(request.query ?? {}), pages),
    dag: async (request, principal) => getDag(bus, principal, { name: request.fields.name ?? '' }),
    dag_spec: async (request, principal) => getDagSpec(bus, principal, { name: request.fields.name ?? '' }),
    dag_search: async (request, principal) => {
      const { search, workspace, cursor, limit } = request.fields;
      return searchDags(bus, principal, {
        search: search ?? '',
        ...(workspace !== undefined ? { workspace } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
    },
    dag_profile: async (request, principal) => getDagProfile(bus, principal, { dagName: request.fields.name ?? '' }),
  };
}
