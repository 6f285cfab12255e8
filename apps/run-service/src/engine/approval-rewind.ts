import { rewindSet, type NormalizedDag } from '@dagu-mcp/dag-spec';
import { StepStatus } from '@dagu-mcp/contracts';
import type { NodeSpec } from '../core/run-types';
import type { Queryable } from '../store/run-rows';
import { loadCheckpointSteps } from '../store/checkpoint.repository';

/**
 * Approval `rewind_to` (dagu-model §3 `approval {prompt, input, required,
 * rewind_to}`; this project's semantics, README "Checkpoints"): a rejected
 * approval whose step names `rewind_to` does not end the run. The decision
 * is recorded (the step `rejected` in the current attempt, with the
 * rejection input in its checkpoint) and the run resumes as a new attempt in
 * which the rewind target, the approval step and every step on a dependency
 * path between them run again (fresh state and logs; the earlier attempt
 * keeps its own); every other finished step is kept. The approval then waits
 * again. The rejection input is given to the steps of that attempt as
 * variables (environment and `${NAME}`), so a re-run step can act on the
 * reviewer's feedback.
 */

/** The `rewind_to` target (a step name) of approval step `stepName`, if it has one. */
export function rewindTargetOf(dag: NormalizedDag, stepName: string): string | undefined {
  return dag.steps.find((step) => step.name === stepName)?.approval?.rewindTo;
}

/**
 * The `seq`s of the steps a resume must run again: for each step of the
 * attempt that ended `rejected` (only a rejected approval with `rewind_to`
 * is ever resumed), its rewind set.
 */
export function rewoundSeqs(
  dag: NormalizedDag,
  steps: readonly NodeSpec[],
  rows: ReadonlyArray<{ seq: number; status: number; handler: string | null }>,
): Set<number> {
  const names = new Set<string>();
  for (const row of rows) {
    if (row.handler !== null || row.status !== StepStatus.rejected) continue;
    const node = steps.find((step) => step.seq === row.seq);
    const target = node === undefined ? undefined : rewindTargetOf(dag, node.name);
    if (node === undefined || target === undefined) continue;
    for (const name of rewindSet(dag.steps, target, node.name)) names.add(name);
  }
  return new Set(steps.filter((step) => names.has(step.name)).map((step) => step.seq));
}

/**
 * The rejection input carried into attempt `attemptNo`: for each approval
 * step with `rewind_to`, its latest decision in an earlier attempt — when that
 * decision was a rejection, its values (a more recent attempt wins, and within
 * an attempt the later step). Attempts in which the approval was not decided
 * (it was re-run, or the attempt was handed back by a stopping replica before
 * it got there) are looked through, so the feedback survives a hand-back.
 * Empty for a first attempt, when nothing was rejected, or once the approval
 * was approved.
 */
export async function rewindInputOf(
  db: Queryable,
  run: { pk: number; attemptNo: number },
  dag: NormalizedDag,
): Promise<Map<string, string>> {
  const carried = new Map<string, string>();
  const open = new Set(dag.steps.filter((step) => step.approval?.rewindTo !== undefined).map((step) => step.name));
  for (let attemptNo = run.attemptNo - 1; attemptNo >= 1 && open.size > 0; attemptNo--) {
    const rows = await loadCheckpointSteps(db, run.pk, attemptNo);
    for (const row of [...rows].reverse()) {
      const decided = row.checkpoint?.decided;
      if (!open.has(row.name) || decided === undefined) continue;
      open.delete(row.name);
      if (row.status !== StepStatus.rejected || decided.decision !== 'rejected') continue;
      for (const [name, value] of Object.entries(decided.values)) if (!carried.has(name)) carried.set(name, value);
    }
  }
  return carried;
}
