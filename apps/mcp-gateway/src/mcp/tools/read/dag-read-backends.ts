import { DagListRequestSchema, dagOps, runOps } from '@dagu-mcp/contracts';
import { isUnknownOpError, type BusClient } from '@dagu-mcp/bus';
import type { ReadBackend } from './read-backends';
import { DagPageMemo } from './dag-page-memo';

/**
 * The DAG read targets of 021 (`dags`, `dag`, `dag_spec`, `dag_search`),
 * each one call to dag-service over the bus. `dags` pages go through the
 * replica's {@link DagPageMemo} (`dag.listIfChanged`: the page travels only
 * when it changed).
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
    dags: async (request, principal) => {
      const query = DagListRequestSchema.parse(request.query ?? {});
      try {
        return await pages.read(query, (asked, ifNoneMatch) =>
          bus.call('dag', dagOps, 'dag.listIfChanged', ifNoneMatch === undefined ? asked : { ...asked, ifNoneMatch }, {
            principal,
          }),
        );
      } catch (error) {
        // dag-service replicas older than this gateway (during a rolling upgrade) know only `dag.list`.
        if (!isUnknownOpError(error, 'dag.listIfChanged')) throw error;
        return bus.call('dag', dagOps, 'dag.list', query, { principal });
      }
    },
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
    // Dagu spec 022b: the DAG must exist (its not-found error with suggestions), and its
    // workspace — the `workspace=` label, else `default` — decides the fallback profile.
    dag_profile: async (request, principal) => {
      const dagName = request.fields.name ?? '';
      const detail = await bus.call('dag', dagOps, 'dag.get', { name: dagName }, { principal });
      const workspace = workspaceOfLabels(detail.labels);
      return bus.call('run', runOps, 'profile.ofDag', { dagName, workspace }, { principal });
    },
  };
}

/** A DAG's workspace (Dagu spec 022b): its first `workspace=<name>` label's value, else `default`. */
export function workspaceOfLabels(labels: readonly string[]): string {
  for (const label of labels) {
    const value = label.startsWith('workspace=') ? label.slice('workspace='.length).trim() : '';
    if (value !== '') return value;
  }
  return 'default';
}
