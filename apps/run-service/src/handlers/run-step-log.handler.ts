import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { readStepLog } from '../read/run-logs';

/**
 * `run.stepLog` — one step's stdout/stderr with the reader options of dagu-model §6 (021 `step_log`). Errors: `resource_not_found` (run or step unknown).
 *
 * @param endedOnly  the pool is a replica: a step that has not ended is declined (`ReplicaDeclined`)
 */
export function createRunStepLogHandler(
  pool: Pool,
  maxBytes: number,
  endedOnly = false,
): OpHandler<RunOps, 'run.stepLog'> {
  return async function runStepLog(payload) {
    return readStepLog(pool, payload, maxBytes, endedOnly);
  };
}
