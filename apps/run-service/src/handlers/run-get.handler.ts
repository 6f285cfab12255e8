import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { getRunDetail } from '../read/run-detail';

/**
 * `run.get` — the run-detail model (021 `run`, dagu-model §5). Errors: see `getRunDetail`.
 */
export function createRunGetHandler(pool: Pool): OpHandler<RunOps, 'run.get'> {
  return async function runGet(payload) {
    return getRunDetail(pool, payload);
  };
}
