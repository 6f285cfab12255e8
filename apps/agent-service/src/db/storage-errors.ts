import { deadlinePassedError } from '@dagu-mcp/bus';
import { createStorageErrors } from '@dagu-mcp/runtime';

/**
 * The agent store's failure mapping: runtime's PostgreSQL classifier bound to
 * this store's name and the bus's deadline error. An outage is
 * `resource_unavailable` (transient); anything else stays as it is.
 */
const agentStoreErrors = createStorageErrors({ store: 'agent store', deadlineError: deadlinePassedError });

/** Runs one agent store operation and rethrows its failure classified. */
export const withStorageErrors = agentStoreErrors.run;
