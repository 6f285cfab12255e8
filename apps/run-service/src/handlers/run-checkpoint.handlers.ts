import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import { completeHumanTask, decideApproval } from '../runs/checkpoint-resume';
import type { RunDeps } from '../runs/run-deps';

/**
 * `run.humanTask` — complete a waiting human task (values validated against
 * its form become the step's outputs); the run resumes by itself.
 * Errors: see `completeHumanTask`.
 */
export function createRunHumanTaskHandler(deps: RunDeps): OpHandler<RunOps, 'run.humanTask'> {
  return async function runHumanTask(payload, ctx) {
    return completeHumanTask(deps, payload, ctx);
  };
}

/**
 * `run.approval` — approve (the run resumes) or reject (the run ends
 * `rejected`) a waiting approval gate. Errors: see `decideApproval`.
 */
export function createRunApprovalHandler(deps: RunDeps): OpHandler<RunOps, 'run.approval'> {
  return async function runApproval(payload, ctx) {
    return decideApproval(deps, payload, ctx);
  };
}
