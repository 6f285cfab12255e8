import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { latestRuns } from '../read/run-list';

/**
 * `run.latest` — the newest run of each named DAG (021 `dag.latestRun`); names without runs are absent.
 */
export function createRunLatestHandler(pool: Pool): OpHandler<RunOps, 'run.latest'> {
  return async function runLatest(payload) {
    return latestRuns(pool, payload.dagNames);
  };
}
