import { requireOpRole, runOps, type OpRequest, type Principal, type RunOps, type RunRef } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';

/**
 * Checkpoints (issue "Checkpoints"; dagu-model §5 `answer`): completing a
 * waiting human task, approving or rejecting a waiting approval gate. The
 * REST checkpoint routes and `dagu_execute`'s question to the person in the
 * client call these, so validation, role and the recorded
 * decider are the same on every face. run-service owns the checkpoint
 * rules: the step must be waiting on that kind of checkpoint (else
 * `conflict`), `values` must satisfy the task's form and an approval's
 * `required` inputs must be given (else `invalid_tool_input` with
 * `details.errors`). The run resumes by itself; a rejection ends it
 * `rejected` (8).
 */

/**
 * Completes the waiting human task of step `stepName` with `values`
 * (`run.humanTask`).
 * @returns the run reference: status 1 (resumed), or 7 while the resume is pending
 * @throws DaguError `unauthorized` below operator (dagu-model §9); run-service's
 *   `resource_not_found` (run or step), `conflict` (not waiting on a human task),
 *   `invalid_tool_input` (values refused by the form)
 */
export async function completeHumanTask(
  bus: BusClient,
  principal: Principal,
  input: OpRequest<RunOps, 'run.humanTask'>,
): Promise<RunRef> {
  requireOpRole(principal, 'run.humanTask');
  return bus.call('run', runOps, 'run.humanTask', input, { principal });
}

/**
 * Approves or rejects the waiting approval gate of step `stepName`
 * (`run.approval`); an approval's `input` values become the step's outputs.
 * @returns the run reference: status 1 (resumed), 8 (rejected), or 7 while the resume is pending
 * @throws DaguError `unauthorized` below operator (dagu-model §9); run-service's
 *   `resource_not_found` (run or step), `conflict` (not waiting on an approval),
 *   `invalid_tool_input` (a required input missing)
 */
export async function decideApproval(
  bus: BusClient,
  principal: Principal,
  input: OpRequest<RunOps, 'run.approval'>,
): Promise<RunRef> {
  requireOpRole(principal, 'run.approval');
  return bus.call('run', runOps, 'run.approval', input, { principal });
}
