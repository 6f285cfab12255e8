import { RunStatus, StepStatus, type RunStatusCode } from '@dagu-mcp/contracts';

/**
 * Outcome rules over the status ints of dagu-model §1 (the ints and labels
 * themselves live in `@dagu-mcp/contracts`): when a step is done, and the
 * run-status rollup this engine applies when a run ends — the rules of
 * dagu-model §3 "Run outcome", which follow Dagu's runtime: see
 * {@link rollupRunStatus} and {@link initFailureStatus}.
 */

/** True for a step status after which the step never changes again in this attempt. */
export function isStepDone(status: number): boolean {
  return (
    status === StepStatus.failed ||
    status === StepStatus.aborted ||
    status === StepStatus.succeeded ||
    status === StepStatus.skipped ||
    status === StepStatus.partiallySucceeded ||
    status === StepStatus.rejected
  );
}

/** What the rollup looks at for one (non-handler) step. */
export interface RollupStep {
  status: number;
  /** The step failed but its `continue_on` let the run go on. */
  allowedFailure: boolean;
}

/** What ended the run before its steps could decide the outcome. */
export type RunInterruption = 'none' | 'aborted' | 'failed';

/**
 * The final status of a run from its steps' statuses (dagu-model §3 "Run
 * outcome"; also the rollup of one foreach item's body):
 *
 * - `interruption = 'aborted'` (stop, a DAG-level precondition not met, a
 *   failing `init` handler: see {@link initFailureStatus}) → 3 aborted;
 * - `interruption = 'failed'` (DAG timeout, an engine error) → 2 failed;
 * - any step failed without an allowing `continue_on`, or aborted because a
 *   dependency failed, or rejected → 2 failed;
 * - some step failed under an allowing `continue_on` (without
 *   `mark_success`), or is itself `partially_succeeded` (a foreach with some
 *   failed items, a `dag.run` whose child partially succeeded) → 6
 *   partially_succeeded when at least one step succeeded (a
 *   `partially_succeeded` step counts: part of it succeeded), else 2 failed
 *   (a run in which nothing succeeded is not a partial success — Dagu's
 *   single-step continue_on case, which stays `failed`);
 * - otherwise (every step succeeded, was skipped, or failed with
 *   `mark_success`, which makes it succeeded; or there are no steps) → 4 succeeded.
 *
 * A skipped step is neither a success nor a failure here.
 */
export function rollupRunStatus(steps: readonly RollupStep[], interruption: RunInterruption = 'none'): RunStatusCode {
  if (interruption === 'aborted') return RunStatus.aborted;
  if (interruption === 'failed') return RunStatus.failed;
  // A step waits at a checkpoint (human.task, approval): the run is not over, it parks.
  if (steps.some((step) => step.status === StepStatus.waiting)) return RunStatus.waiting;
  let partial = 0;
  let succeeded = 0;
  for (const step of steps) {
    if (step.status === StepStatus.failed && !step.allowedFailure) return RunStatus.failed;
    if (step.status === StepStatus.aborted || step.status === StepStatus.rejected) return RunStatus.failed;
    if (step.status === StepStatus.failed) partial++;
    else if (step.status === StepStatus.partiallySucceeded) {
      partial++;
      succeeded++;
    } else if (step.status === StepStatus.succeeded) succeeded++;
  }
  if (partial === 0) return RunStatus.succeeded;
  return succeeded > 0 ? RunStatus.partiallySucceeded : RunStatus.failed;
}

/**
 * The status of a run whose `handler_on.init` did not succeed (dagu-model §3
 * "Run outcome"): `aborted` — no step starts, they stay `not_started`, and
 * the `abort` and `exit` handlers run as for any aborted run — unless the
 * DAG's `timeout_sec` cut the handler short (`interruption = 'failed'`: a
 * timeout fails a run wherever it strikes).
 */
export function initFailureStatus(interruption: RunInterruption): RunStatusCode {
  return interruption === 'failed' ? RunStatus.failed : RunStatus.aborted;
}

/**
 * The status after the lifecycle handlers ran: a failing `success`,
 * `failure` or `exit` handler turns a succeeded or partially succeeded run
 * into a failed one; an aborted or failed run keeps its status.
 */
export function applyHandlerOutcome(status: RunStatusCode, handlerFailed: boolean): RunStatusCode {
  if (!handlerFailed) return status;
  return status === RunStatus.succeeded || status === RunStatus.partiallySucceeded ? RunStatus.failed : status;
}
