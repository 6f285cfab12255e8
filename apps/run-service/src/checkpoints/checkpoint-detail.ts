import type { RunDetail } from '@dagu-mcp/contracts';
import { RunStatus, StepStatus } from '../engine/status';
import type { Queryable } from '../store/run-rows';
import { isResumePending, loadCheckpointSteps } from './checkpoint.repository';
import { checkpointDetail } from './checkpoint-types';

/**
 * Adds the checkpoint fields of 021 to a run detail: on a waiting step its
 * open `humanTask {prompt, form}` or `approval {prompt, input, required}`,
 * and on the run `humanTaskResumePending` (accepted input is durable, the
 * resume attempt is not started yet). Only a waiting run (7) has them, so
 * other runs cost no extra query.
 */
export async function withCheckpoints(db: Queryable, run: { pk: number; attempt_no: number; status: number }, detail: RunDetail): Promise<RunDetail> {
  if (run.status !== RunStatus.waiting) return detail;
  const [rows, pending] = await Promise.all([loadCheckpointSteps(db, run.pk, run.attempt_no), isResumePending(db, run.pk)]);
  const open = new Map(rows.filter((row) => row.status === StepStatus.waiting && row.checkpoint !== null && row.checkpoint.decided === undefined).map((row) => [row.name, row.checkpoint]));
  const steps = detail.steps.map((step) => {
    const checkpoint = open.get(step.name);
    return checkpoint === undefined || checkpoint === null ? step : { ...step, ...checkpointDetail(checkpoint) };
  });
  return { ...detail, steps, humanTaskResumePending: pending };
}
