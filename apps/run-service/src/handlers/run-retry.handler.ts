import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { RunDeps } from '../runs/run-deps';
import { retryRun } from '../runs/run-retry';

/**
 * `run.retry` — a new attempt of a run, whole or from a step (036 retry). Errors: see `retryRun`.
 */
export function createRunRetryHandler(deps: RunDeps): OpHandler<RunOps, 'run.retry'> {
  return async function runRetry(payload, ctx) {
    return retryRun(deps, payload, ctx);
  };
}
