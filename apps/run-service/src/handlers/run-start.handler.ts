import type { OpHandler } from '@dagu-mcp/bus';
import { DaguError, type RunOps } from '@dagu-mcp/contracts';
import type { RunDeps } from '../runs/run-deps';
import { startRun } from '../runs/run-start';

/**
 * `run.start` — start or enqueue a run (036 start/enqueue); replies at once with the run's id and
 * status, the run executes in the background. Over the bus a stored DAG goes by name only: YAML
 * sent with `inline: false` is refused (`invalid_tool_input` on `spec`), so that no caller runs
 * YAML of its own under a stored DAG's name without the developer role that an inline start needs
 * (dagu-model §9). The scheduler passes the YAML it read in-process, not over the bus. Other
 * errors: see `startRun`.
 */
export function createRunStartHandler(deps: RunDeps): OpHandler<RunOps, 'run.start'> {
  return async function runStart(payload, ctx) {
    if (!payload.inline && payload.spec !== undefined)
      throw new DaguError(
        'invalid_tool_input',
        'A start of a stored DAG goes by its name; its YAML is read from dag-service. Send YAML of your own as an inline start.',
        { field: 'spec' },
      );
    return startRun(deps, payload, ctx);
  };
}
