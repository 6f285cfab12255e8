import { createStore } from '@dagu-mcp/service-kit';

/**
 * The agent store: runtime's PostgreSQL classifier bound to this store's name (an outage is
 * `resource_unavailable`, transient; anything else stays as it is) and service-kit's one shape
 * of a change (deadline fence, mutation record).
 */
const agentStore = createStore('agent store');

/** Runs one agent store operation and rethrows its failure classified. */
export const withStorageErrors = agentStore.run;

/** One change of the agent store, in a transaction fenced by the deadline, with its record. */
export const mutate = agentStore.mutate;
