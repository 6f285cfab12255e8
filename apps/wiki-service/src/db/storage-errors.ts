import { deadlinePassedError } from '@dagu-mcp/bus';
import { createStorageErrors } from '@dagu-mcp/runtime';

/**
 * The wiki store's failure mapping: runtime's one PostgreSQL classifier
 * (`postgres/pg-errors.ts`, CONTRIBUTING §7) bound to this store's name and the
 * bus's deadline error. An outage is `resource_unavailable` (spec 021 "The
 * resource exists but cannot currently be read"; transient); anything else
 * stays as it is.
 */
const wikiStoreErrors = createStorageErrors({ store: 'wiki store', deadlineError: deadlinePassedError });

/** Runs one wiki store operation and rethrows its failure classified. */
export const withStorageErrors = wikiStoreErrors.run;
