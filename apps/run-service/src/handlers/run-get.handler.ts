import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import { TERMINAL_RUN_STATUSES } from '@dagu-mcp/contracts';
import { ReplicaDeclined, type Pool } from '@dagu-mcp/runtime';
import { getRunDetail } from '../read/run-detail';

/**
 * `run.get` — the run-detail model (021 `run`, dagu-model §5). Errors: see `getRunDetail`.
 *
 * @param endedOnly  the pool is a replica: a run that has not ended is declined
 *   (`ReplicaDeclined`), so a running run is always read from the primary
 */
export function createRunGetHandler(pool: Pool, endedOnly = false): OpHandler<RunOps, 'run.get'> {
  return async function runGet(payload) {
    const detail = await getRunDetail(pool, payload);
    if (endedOnly && !TERMINAL_RUN_STATUSES.has(detail.status)) throw new ReplicaDeclined('run not ended');
    return detail;
  };
}
