import { deadlinePassedError } from '@dagu-mcp/bus';
import { createStorageErrors } from '@dagu-mcp/runtime';

/**
 * The DAG store's failure mapping: runtime's one PostgreSQL classifier
 * (`postgres/pg-errors.ts`, CONTRIBUTING §7) bound to this store's name and the
 * bus's deadline error. An outage is `resource_unavailable` (transient, spec
 * 022 "cannot currently be read or written"); anything else stays as it is.
 */
const dagStoreErrors = createStorageErrors({ store: 'DAG store', deadlineError: deadlinePassedError });

/** Runs one DAG store operation and rethrows its failure classified. */
export const withStorageErrors = dagStoreErrors.run;
