import { type RunDetail, type RunStepSchema } from '@dagu-mcp/contracts';
import type { z } from 'zod';
import type { Pool } from '@dagu-mcp/runtime';
import { handlerKey } from '../core/dag-nodes';
import { runStatusLabel, stepStatusLabel } from '../core/status-rules';
import { runNotFound, withStorageErrors } from '../store/pg-errors';
import { findRun, loadSteps } from '../store/run.repository';
import type { RunRecord, StepRecord } from '../store/run-rows';
import { formatUri } from '../core/run-id';
import { withCheckpoints } from '../store/checkpoint.repository';
import { subRunDetail, withSubRuns } from './sub-run-detail';
import { withForeachUris } from './foreach-read';

/**
 * `run.get`: the run-detail model (021 "Run detail", dagu-model §5) of a
 * root run's current attempt. Fields beyond the 021 minimum: `queuedAt`,
 * `params`, `labels`, `queue`, `attemptNo`, `error` (why the run failed or
 * was aborted, when the engine knows), `handlers` (`onInit`, `onSuccess`,
 * `onFailure`, `onAbort`, `onExit` step entries), and on steps `id`,
 * `retryCount` (when > 0), `exitCode` and `outputs` (published values).
 * Timestamps are RFC 3339 with milliseconds, UTC.
 *
 * Errors: `resource_not_found` (no such run; child runs — `subRunId` — do
 * not exist yet in this engine); `resource_unavailable`.
 */

/** `name`/`dagRunId` of the run, `subRunId` of a child run. */
export interface RunAddressInput {
  dagName: string;
  dagRunId: string;
  subRunId?: string;
}

function iso(date: Date | null): string | undefined {
  return date === null ? undefined : date.toISOString();
}

/** One step entry of the run detail. */
export function stepEntryOf(run: RunRecord, step: StepRecord): z.input<typeof RunStepSchema> {
  const outputs = { ...(step.outputs.outputs ?? {}), ...(step.outputs.fields ?? {}) };
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
  };
}

/** Builds the detail of a loaded run and its current attempt's steps. */
export function runDetailOf(run: RunRecord, steps: readonly StepRecord[]): RunDetail {
  const handlers: Record<string, z.input<typeof RunStepSchema>> = {};
  for (const step of steps) {
    if (step.handler === null) continue;
    const kind = step.handler;
    if (kind === 'init' || kind === 'success' || kind === 'failure' || kind === 'abort' || kind === 'exit' || kind === 'wait') handlers[handlerKey(kind)] = stepEntryOf(run, step);
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
    queue: run.queue,
    ...(run.error !== null ? { error: run.error } : {}),
    handlers,
    steps: steps.filter((step) => step.handler === null).map((step) => stepEntryOf(run, step)),
  };
}

/** Loads and builds the detail of a run. */
export async function getRunDetail(pool: Pool, input: RunAddressInput): Promise<RunDetail> {
  return withStorageErrors(async () => {
    const subRunId = input.subRunId;
    if (subRunId !== undefined) {
      const { run, detail } = await subRunDetail(pool, { dagName: input.dagName, dagRunId: input.dagRunId, subRunId });
      const withForeach = await withForeachUris(pool, run, detail, { name: input.dagName, dagRunId: input.dagRunId, subRunId });
      return withSubRuns(pool, run, await withCheckpoints(pool, run, withForeach));
    }
    const run = await findRun(pool, input.dagName, input.dagRunId);
    if (run === undefined) throw runNotFound(input.dagName, input.dagRunId);
    const detail = await withForeachUris(pool, run, runDetailOf(run, await loadSteps(pool, run.pk, run.attempt_no)), { name: run.dag_name, dagRunId: run.dag_run_id });
    return withSubRuns(pool, run, await withCheckpoints(pool, run, detail));
  });
}
