import { checkpointOf } from '../core/checkpoint-types';
import type { StepExecutor } from '../core/run-types';
import { runShellBody } from './shell.executor';

/**
 * The two checkpoint step kinds (dagu-model §1 status 7, §3 `human.task`,
 * `approval`; README "Checkpoints").
 */

/**
 * `human.task`: runs nothing; the step waits at once with its checkpoint
 * (interpolated prompt, form). No output file: its outputs are the values of
 * the decision (runs/checkpoint-resume.ts).
 */
export const humanTaskExecutor: StepExecutor = {
  publishesOutputs: false,
  run: async (_ctx, input) => {
    const checkpoint = checkpointOf(input.node.step, input.scope);
    return { ok: true, timedOut: false, aborted: false, ...(checkpoint !== undefined ? { checkpoint } : {}) };
  },
};

/**
 * `approval`: the gate's own commands run like a command step; once they
 * succeeded the try opens the approval checkpoint (executors/step-try.ts),
 * and a rejection with `rewind_to` runs them again.
 */
export const approvalExecutor: StepExecutor = { publishesOutputs: true, run: runShellBody };
