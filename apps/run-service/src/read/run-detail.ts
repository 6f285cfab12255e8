import type { RunDetail } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { runNotFound, withStorageErrors } from '../store/storage-errors';
import { findRun, loadSteps } from '../store/run.repository';
import { withCheckpoints } from '../store/checkpoint.repository';
import { runDetailOf } from './run-detail-model';
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

/** Loads and builds the detail of a run. */
export async function getRunDetail(pool: Pool, input: RunAddressInput): Promise<RunDetail> {
  return withStorageErrors(async () => {
    const subRunId = input.subRunId;
    if (subRunId !== undefined) {
      const { run, detail } = await subRunDetail(pool, { dagName: input.dagName, dagRunId: input.dagRunId, subRunId });
      const withForeach = await withForeachUris(pool, run, detail, {
        name: input.dagName,
        dagRunId: input.dagRunId,
        subRunId,
      });
      return withSubRuns(pool, run, await withCheckpoints(pool, run, withForeach));
    }
    const run = await findRun(pool, input.dagName, input.dagRunId);
    if (run === undefined) throw runNotFound(input.dagName, input.dagRunId);
    const detail = await withForeachUris(pool, run, runDetailOf(run, await loadSteps(pool, run.pk, run.attempt_no)), {
      name: run.dag_name,
      dagRunId: run.dag_run_id,
    });
    return withSubRuns(pool, run, await withCheckpoints(pool, run, detail));
  });
}
