import type { NormalizedStep } from '@dagu-mcp/dag-spec';
import { z } from 'zod';
import { interpolate, type InterpolationScope } from './interpolate';

/**
 * Checkpoints (dagu-model §1 status 7, §3 `human.task` and `approval`): what a
 * waiting step waits for. The engine opens one when a `human.task` step is
 * reached or an `approval` step's commands succeeded; it is stored with the
 * step (`run_steps.checkpoint`) and shown in the run detail (021 `humanTask` /
 * `approval`). A decision (`checkpoint-resume.ts`) is recorded in it too.
 */

const JsonValueSchema: z.ZodType<unknown> = z.unknown();

/** The decision taken on a checkpoint. */
export const CheckpointDecisionSchema = z.object({
  decision: z.enum(['completed', 'approved', 'rejected']),
  values: z.record(z.string(), z.string()),
  at: z.string(),
});

/** A stored checkpoint. */
export const CheckpointSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('human_task'),
    prompt: z.string(),
    form: z.record(z.string(), JsonValueSchema).optional(),
    decided: CheckpointDecisionSchema.optional(),
  }),
  z.object({
    kind: z.literal('approval'),
    prompt: z.string().optional(),
    input: z.array(z.string()),
    required: z.array(z.string()),
    decided: CheckpointDecisionSchema.optional(),
  }),
]);
export type Checkpoint = z.output<typeof CheckpointSchema>;

/**
 * The checkpoint a step opens once its own work is done, with its prompt
 * interpolated (`${params.X}`, step outputs…), or `undefined` for a step
 * that is not a checkpoint.
 */
export function checkpointOf(step: NormalizedStep, scope: InterpolationScope): Checkpoint | undefined {
  if (step.action?.type === 'human.task') {
    const prompt = interpolate(step.action.prompt, scope, 'plain');
    return step.action.form !== undefined
      ? { kind: 'human_task', prompt, form: step.action.form }
      : { kind: 'human_task', prompt };
  }
  if (step.approval !== undefined) {
    const { prompt, input, required } = step.approval;
    return {
      kind: 'approval',
      ...(prompt !== undefined ? { prompt: interpolate(prompt, scope, 'plain') } : {}),
      input,
      required,
    };
  }
  return undefined;
}

/** The run step a checkpoint belongs to: the run's own DAG name and id (a child run's, for a child). */
export interface CheckpointAddress {
  dagName: string;
  dagRunId: string;
  stepName: string;
}

/**
 * How to decide an open checkpoint over REST (dagu-model §5 `answer`):
 * `POST /api/v1/dag-runs/{name}/{dagRunId}/steps/{step}/human-task` (body
 * `{values}`) or `…/approval` (body `{decision, input}`), by a principal of
 * role `operator` or higher with a key that has the `rest_api` surface.
 */
export function answerOf(
  kind: Checkpoint['kind'],
  address: CheckpointAddress,
): { method: 'POST'; path: string; role: 'operator'; surface: 'rest_api' } {
  const segments = [address.dagName, address.dagRunId, 'steps', address.stepName].map(encodeURIComponent).join('/');
  const action = kind === 'human_task' ? 'human-task' : 'approval';
  return { method: 'POST', path: `/api/v1/dag-runs/${segments}/${action}`, role: 'operator', surface: 'rest_api' };
}

/**
 * The 021 run-detail fields of a waiting step's open checkpoint
 * (`humanTask` / `approval`) and, with its address, how to answer it
 * (`answer`, dagu-model §5).
 */
export function checkpointDetail(checkpoint: Checkpoint, address?: CheckpointAddress): Record<string, unknown> {
  const answer = address === undefined ? {} : { answer: answerOf(checkpoint.kind, address) };
  if (checkpoint.kind === 'human_task') {
    return {
      humanTask: { prompt: checkpoint.prompt, ...(checkpoint.form !== undefined ? { form: checkpoint.form } : {}) },
      ...answer,
    };
  }
  return {
    approval: {
      ...(checkpoint.prompt !== undefined ? { prompt: checkpoint.prompt } : {}),
      ...(checkpoint.input.length > 0 ? { input: checkpoint.input } : {}),
      ...(checkpoint.required.length > 0 ? { required: checkpoint.required } : {}),
    },
    ...answer,
  };
}
