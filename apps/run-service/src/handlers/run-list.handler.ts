import type { OpHandler } from '@dagu-mcp/bus';
import { ACTIVE_RUN_STATUSES, type RunOps } from '@dagu-mcp/contracts';
import { ReplicaDeclined, type Pool } from '@dagu-mcp/runtime';
import { listRuns } from '../read/run-list';

/**
 * `run.list` — one page of run summaries, newest first (021 `runs` query). Errors: `invalid_tool_input` on a foreign cursor.
 *
 * @param endedOnly  the pool is a replica: a list asking for active runs (a `status` filter naming
 *   running, queued or waiting, as the gateway's "no rename while a run is active" check does) is
 *   declined (`ReplicaDeclined`), so it is answered from the primary
 */
export function createRunListHandler(pool: Pool, endedOnly = false): OpHandler<RunOps, 'run.list'> {
  return async function runList(payload) {
    if (endedOnly && payload.status?.some((status) => ACTIVE_RUN_STATUSES.includes(status)) === true)
      throw new ReplicaDeclined('active runs asked for');
    return listRuns(pool, payload);
  };
}
