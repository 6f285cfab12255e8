import { ACTIVE_RUN_STATUSES, RunStatus, StepStatus } from '@dagu-mcp/contracts';

/**
 * Status sets as SQL list literals (`(1, 5, 7)`), built from the contract
 * constants (dagu-model §1) so no statement spells a raw status int. They
 * are interpolated into statement text, never bound as parameters, so the
 * planner still matches the partial index `runs_active_idx`. Only these
 * constants are ever interpolated: values that come from a caller are bound.
 */

/** `(a, b, …)` of status ints. */
export function sqlStatusList(codes: readonly number[]): string {
  return `(${codes.join(', ')})`;
}

/** Runs that are not over: running, queued, waiting (singleton, stop, forced end, open child). */
export const ACTIVE_RUNS_SQL = sqlStatusList(ACTIVE_RUN_STATUSES);
/** Runs that may have an owner: running and waiting (a waiting run with no owner is parked and holds no queue slot). */
export const OWNED_RUNS_SQL = sqlStatusList([RunStatus.running, RunStatus.waiting]);
/** Steps that are executing: running, or retrying between tries. */
export const LIVE_STEPS_SQL = sqlStatusList([StepStatus.running, StepStatus.retrying]);
/** Steps a forced end must close: not started, running, waiting, retrying. */
export const OPEN_STEPS_SQL = sqlStatusList([
  StepStatus.notStarted,
  StepStatus.running,
  StepStatus.waiting,
  StepStatus.retrying,
]);
