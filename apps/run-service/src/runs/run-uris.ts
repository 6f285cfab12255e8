import { formatDaguUri } from '@dagu-mcp/contracts';

/**
 * The canonical `dagu://` URIs of runs (spec 020/021 via `formatDaguUri`):
 * run, its logs, a step's log.
 */
export const formatUri = {
  /** `dagu://runs/{name}/{dagRunId}`. */
  run: (name: string, dagRunId: string): string => formatDaguUri({ kind: 'run', name, dagRunId }),
  /** `dagu://runs/{name}/{dagRunId}/logs`. */
  runLogs: (name: string, dagRunId: string): string => formatDaguUri({ kind: 'run_logs', name, dagRunId }),
  /** `dagu://runs/{name}/{dagRunId}/steps/{stepName}/logs`. */
  stepLog: (name: string, dagRunId: string, stepName: string): string =>
    formatDaguUri({ kind: 'step_log', name, dagRunId, stepName }),
};
