import { DaguError } from '@dagu-mcp/contracts';
import { createStore } from '@dagu-mcp/service-kit';

/**
 * The run store: runtime's one PostgreSQL classifier (`postgres/pg-errors.ts`,
 * CONTRIBUTING "Errors") bound to this store's name, and service-kit's one shape
 * of a change (deadline fence, mutation record). PostgreSQL down, overloaded, or a statement
 * cut by the request's deadline is `resource_unavailable` (transient); a
 * unique violation is left to the caller, who knows which conflict it means;
 * anything else stays as it is (the bus boundary turns it into `internal_error`).
 */
const runStore = createStore('run store');

/** Runs one run store operation and rethrows its failure classified. */
export const withStorageErrors = runStore.run;

/** One change of the run store, in a transaction fenced by the deadline, with its record. */
export const mutate = runStore.mutate;

/** `resource_not_found` for a run. */
export function runNotFound(dagName: string, dagRunId: string): DaguError {
  return new DaguError('resource_not_found', `No run ${dagRunId} of DAG ${dagName} exists.`, { field: 'dagRunId' });
}
