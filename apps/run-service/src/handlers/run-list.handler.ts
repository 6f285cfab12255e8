import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { listRuns } from '../read/run-list';

/**
 * `run.list` — one page of run summaries, newest first (021 `runs` query). Errors: `invalid_tool_input` on a foreign cursor.
 */
export function createRunListHandler(pool: Pool): OpHandler<RunOps, 'run.list'> {
  return async function runList(payload) {
    return listRuns(pool, payload);
  };
}
