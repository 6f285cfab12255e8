import { createStore } from '@dagu-mcp/service-kit';

/**
 * The wiki store: runtime's PostgreSQL classifier bound to this store's name (an outage is
 * `resource_unavailable`, spec 021 "The resource exists but cannot currently be read";
 * transient) and service-kit's one shape of a change (deadline fence, mutation record).
 */
const wikiStore = createStore('wiki store');

/** Runs one wiki store operation and rethrows its failure classified. */
export const withStorageErrors = wikiStore.run;

/** One change of the wiki store, in a transaction fenced by the deadline, with its record. */
export const mutate = wikiStore.mutate;
