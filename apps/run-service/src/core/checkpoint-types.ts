import type { NormalizedStep } from '@dagu-mcp/dag-spec';
import { z } from 'zod';
import { interpolate, type InterpolationScope } from './interpolate';
import { ActorSchema } from './started-by';

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
  /** Who decided (absent on decisions recorded before attribution). */
  by: ActorSchema.optional(),
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

/** The 021 run-detail fields of a waiting step's open checkpoint (`humanTask` / `approval`). */
export function checkpointDetail(checkpoint: Checkpoint): Record<string, unknown> {
  if (checkpoint.kind === 'human_task') {
    return {
      humanTask: { prompt: checkpoint.prompt, ...(checkpoint.form !== undefined ? { form: checkpoint.form } : {}) },
    };
  }
  return {
    approval: {
      ...(checkpoint.prompt !== undefined ? { prompt: checkpoint.prompt } : {}),
      ...(checkpoint.input.length > 0 ? { input: checkpoint.input } : {}),
      ...(checkpoint.required.length > 0 ? { required: checkpoint.required } : {}),
    },
  };
}

/**
 * The step's `decision` of dagu-model §5 (`{by, at, outcome}`) once its
 * checkpoint was decided: `outcome` is `completed` (human task), `approved`
 * or `rejected`; `by` is `null` for a decision recorded before attribution.
 */
export function decisionOf(checkpoint: unknown): Record<string, unknown> | undefined {
  const parsed = CheckpointSchema.safeParse(checkpoint);
  const decided = parsed.success ? parsed.data.decided : undefined;
  if (decided === undefined) return undefined;
  return { by: decided.by ?? null, at: decided.at, outcome: decided.decision };
}
