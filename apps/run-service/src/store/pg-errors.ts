import { DaguError } from '@dagu-mcp/contracts';
import { deadlinePassedError } from '@dagu-mcp/bus';
import { createStorageErrors } from '@dagu-mcp/runtime';

/**
 * The run store's failure mapping: runtime's one PostgreSQL classifier
 * (`postgres/pg-errors.ts`, CONTRIBUTING "Errors") bound to this store's name
 * and the bus's deadline error. PostgreSQL down, overloaded, or a statement
 * cut by the request's deadline is `resource_unavailable` (transient); a
 * unique violation is left to the caller, who knows which conflict it means;
 * anything else stays as it is (the bus boundary turns it into `internal_error`).
 */
const runStoreErrors = createStorageErrors({ store: 'run store', deadlineError: deadlinePassedError });

/** Runs one run store operation and rethrows its failure classified. */
export const withStorageErrors = runStoreErrors.run;

/** `resource_not_found` for a run. */
export function runNotFound(dagName: string, dagRunId: string): DaguError {
  return new DaguError('resource_not_found', `No run ${dagRunId} of DAG ${dagName} exists.`, { field: 'dagRunId' });
}
