import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { readRunLogs } from '../read/run-logs';

/**
 * `run.logs` — the run-log model (021 `run_logs`): scheduler-log tail and per-step stream flags. Errors: `resource_not_found`.
 *
 * @param endedOnly  the pool is a replica: a run that has not ended is declined (`ReplicaDeclined`)
 */
export function createRunLogsHandler(pool: Pool, maxBytes: number, endedOnly = false): OpHandler<RunOps, 'run.logs'> {
  return async function runLogs(payload) {
    return readRunLogs(pool, payload, maxBytes, endedOnly);
  };
}
