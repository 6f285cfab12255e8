import { RunStatus, StepStatus, type RunStatusCode } from '@dagu-mcp/contracts';

/**
 * Outcome rules over the status ints of dagu-model §1 (the ints and labels
 * themselves live in `@dagu-mcp/contracts`): when a step is done, and the
 * run-status rollup this engine applies when a run ends. The rollup is
 * where this project fixes Dagu's outcomes (README "Semantics"): see
 * {@link rollupRunStatus}.
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
 * The final status of a run from its steps' statuses.
 *
 * - `interruption = 'aborted'` (stop, or a DAG-level precondition not met) → 3 aborted;
 * - `interruption = 'failed'` (DAG timeout, failing init handler, an engine error) → 2 failed;
 * - any step failed without an allowing `continue_on`, or aborted because a
 *   dependency failed → 2 failed;
 * - some step failed with an allowing `continue_on` → 6 partially_succeeded
 *   when at least one other step succeeded or was skipped, else 2 failed
 *   (a run in which nothing succeeded is not a partial success — Dagu's
 *   single-step continue_on case);
 * - otherwise (every step succeeded or was skipped, or there are no steps) → 4 succeeded.
 *
 * A step marked succeeded by `continue_on.mark_success` counts as succeeded.
 */
export function rollupRunStatus(steps: readonly RollupStep[], interruption: RunInterruption = 'none'): RunStatusCode {
  if (interruption === 'aborted') return RunStatus.aborted;
  if (interruption === 'failed') return RunStatus.failed;
  // A step waits at a checkpoint (human.task, approval): the run is not over, it parks.
  if (steps.some((step) => step.status === StepStatus.waiting)) return RunStatus.waiting;
  let allowedFailures = 0;
  let goodSteps = 0;
  for (const step of steps) {
    if (step.status === StepStatus.failed && !step.allowedFailure) return RunStatus.failed;
    if (step.status === StepStatus.aborted || step.status === StepStatus.rejected) return RunStatus.failed;
    if (step.status === StepStatus.failed) allowedFailures++;
    else if (
      step.status === StepStatus.succeeded ||
      step.status === StepStatus.skipped ||
      step.status === StepStatus.partiallySucceeded
    ) {
      goodSteps++;
    }
  }
  if (allowedFailures === 0) return RunStatus.succeeded;
  return goodSteps > 0 ? RunStatus.partiallySucceeded : RunStatus.failed;
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
