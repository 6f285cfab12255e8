import { type RunDetail, runStatusLabel, type RunStepSchema, StepStatus, stepStatusLabel } from '@dagu-mcp/contracts';
import type { z } from 'zod';
import { handlerKey } from '../core/dag-nodes';
import { formatUri } from '../core/run-id';
import { decisionOf } from '../core/checkpoint-types';
import type { RunRecord, StepRecord } from '../store/run-rows';

/**
 * The 021 run-detail model (dagu-model §5) built from loaded rows, without
 * reading anything: shared by the root-run detail (`run-detail.ts`) and the
 * child-run detail (`sub-run-detail.ts`), so neither imports the other.
 */

function iso(date: Date | null): string | undefined {
  return date === null ? undefined : date.toISOString();
}

/** One step entry of the run detail. */
export function stepEntryOf(run: RunRecord, step: StepRecord): z.input<typeof RunStepSchema> {
  const outputs = { ...(step.outputs.outputs ?? {}), ...(step.outputs.fields ?? {}) };
  const decision = decisionOf(step.checkpoint);
  if (step.outputs.variable !== undefined) outputs[step.outputs.variable.name] = step.outputs.variable.value;
  return {
    name: step.name,
    ...(step.step_id !== null ? { id: step.step_id } : {}),
    status: step.status,
    statusLabel: stepStatusLabel(step.status),
    logUri: formatUri.stepLog(run.dag_name, run.dag_run_id, step.name),
    ...(step.started_at !== null ? { startedAt: iso(step.started_at) } : {}),
    ...(step.finished_at !== null ? { finishedAt: iso(step.finished_at) } : {}),
    ...(step.error !== null ? { error: step.error } : {}),
    ...(step.retry_count > 0 ? { retryCount: step.retry_count } : {}),
    ...(step.exit_code !== null ? { exitCode: step.exit_code } : {}),
    ...(Object.keys(outputs).length > 0 ? { outputs } : {}),
    // dagu-model §5: why a precondition skipped the step.
    ...(step.status === StepStatus.skipped && step.outputs.skipReason !== undefined
      ? { skipReason: step.outputs.skipReason }
      : {}),
    ...(decision !== undefined ? { decision } : {}),
  };
}

/** Builds the detail of a loaded run and its current attempt's steps. */
export function runDetailOf(run: RunRecord, steps: readonly StepRecord[]): RunDetail {
  const handlers: Record<string, z.input<typeof RunStepSchema>> = {};
  for (const step of steps) {
    if (step.handler === null) continue;
    const kind = step.handler;
    if (
      kind === 'init' ||
      kind === 'success' ||
      kind === 'failure' ||
      kind === 'abort' ||
      kind === 'exit' ||
      kind === 'wait'
    )
      handlers[handlerKey(kind)] = stepEntryOf(run, step);
  }
  return {
    name: run.dag_name,
    dagRunId: run.dag_run_id,
    uri: formatUri.run(run.dag_name, run.dag_run_id),
    logsUri: formatUri.runLogs(run.dag_name, run.dag_run_id),
    attemptId: run.attempt_id,
    attemptNo: run.attempt_no,
    status: run.status,
    statusLabel: runStatusLabel(run.status),
    ...(run.started_at !== null ? { startedAt: iso(run.started_at) } : {}),
    ...(run.finished_at !== null ? { finishedAt: iso(run.finished_at) } : {}),
    ...(run.queued_at !== null ? { queuedAt: iso(run.queued_at) } : {}),
    params: run.params,
    labels: run.labels,
    ...(run.started_by !== null ? { startedBy: run.started_by } : {}),
    // The runtime profile the run started with (Dagu spec 022b), null when none.
    profile: run.profile,
    queue: run.queue,
    ...(run.error !== null ? { error: run.error } : {}),
    handlers,
    steps: steps.filter((step) => step.handler === null).map((step) => stepEntryOf(run, step)),
  };
}
