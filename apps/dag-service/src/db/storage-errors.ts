import { createStore } from '@dagu-mcp/service-kit';

/**
 * The DAG store: runtime's PostgreSQL classifier bound to this store's name (an outage is
 * `resource_unavailable`, transient, spec 022 "cannot currently be read or written"; anything
 * else stays as it is) and service-kit's one shape of a change (deadline fence, mutation record).
 */
const dagStore = createStore('DAG store');

/** Runs one DAG store operation and rethrows its failure classified. */
export const withStorageErrors = dagStore.run;

/** One change of the DAG store, in a transaction fenced by the deadline, with its record. */
export const mutate = dagStore.mutate;
