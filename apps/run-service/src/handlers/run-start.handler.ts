import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { RunDeps } from '../runs/run-deps';
import { startRun } from '../runs/run-start';

/**
 * `run.start` — start or enqueue a run (036 start/enqueue); replies at once with the run's id and status, the run executes in the background. Errors: see `startRun`.
 */
export function createRunStartHandler(deps: RunDeps): OpHandler<RunOps, 'run.start'> {
  return async function runStart(payload, ctx) {
    return startRun(deps, payload, ctx);
  };
}
