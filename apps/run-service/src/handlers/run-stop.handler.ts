import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { RunDeps } from '../runs/run-deps';
import { stopRun } from '../runs/run-stop';

/**
 * `run.stop` — abort a running, waiting or queued run (036 stop). Errors: see `stopRun`.
 */
export function createRunStopHandler(deps: RunDeps): OpHandler<RunOps, 'run.stop'> {
  return async function runStop(payload, ctx) {
    return stopRun(deps, payload, ctx);
  };
}
