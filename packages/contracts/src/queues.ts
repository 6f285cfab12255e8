/**
 * Queue names of the bus, one per service. The only place these literals live
 * (CONTRIBUTING §4). The BullMQ key prefix (`BUS_PREFIX`, default `dagu`) is
 * applied on top, so tests can run on their own prefix.
 */
export const QUEUE_NAMES = {
  /** dag-service: DAG validation, storage, list, search, spec. */
  dag: 'dag-service',
  /** run-service: DAG-runs, logs, the engine. */
  run: 'run-service',
  /** wiki-service: Wiki pages per workspace. */
  wiki: 'wiki-service',
  /** agent-service: published agents and their catalogs. */
  agent: 'agent-service',
} as const;

export type ServiceName = keyof typeof QUEUE_NAMES;
export const SERVICE_NAMES: readonly ServiceName[] = ['dag', 'run', 'wiki', 'agent'];
