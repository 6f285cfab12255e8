import {
  DaguError,
  ForeachItemsQuerySchema,
  RunLogsQuerySchema,
  RunsQuerySchema,
  StepLogQuerySchema,
  type Principal,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import {
  getForeachItem,
  getLatestRuns,
  getRun,
  getRunLogs,
  getStepLog,
  listForeachItems,
  listRuns,
} from '../../../actions/run-reads.actions';
import type { ReadBackend } from './read-backends';
import type { ReadRequest } from './read-input';

/**
 * The run read targets of 021 (`runs`, `run`, `run_logs`, `step_log`,
 * `foreach_items`, `foreach_item`), each one run read action
 * (actions/run-reads.actions.ts). The request is already validated
 * (021 §Input, §Query handling); its parsed query (target or URI mode) is
 * re-checked against the contract schema before it travels.
 *
 * - `runs` → `run.list` with the `RunsQuery` (run collection model);
 * - `run` → `run.get {dagName, dagRunId, subRunId?}` (run-detail model);
 * - `run_logs` → `run.logs {dagName, dagRunId, tail?}` (run-log model);
 * - `step_log` → `run.stepLog {dagName, dagRunId, subRunId?, stepName, item?,
 *   bodyStepName?, query?}` (step-log model);
 * - `foreach_items` → `run.foreachItems {dagName, dagRunId, subRunId?,
 *   stepName, query?}` (foreach items model; `parent` lists a nested foreach);
 * - `foreach_item` → `run.foreachItem {…, item}` (foreach item model).
 *
 * Errors are run-service's: `resource_not_found` for an unknown run, step or
 * log stream, `resource_unavailable` when it does not answer.
 */
export function createRunReadBackends(bus: BusClient): {
  runs: ReadBackend;
  run: ReadBackend;
  run_logs: ReadBackend;
  step_log: ReadBackend;
  foreach_items: ReadBackend;
  foreach_item: ReadBackend;
} {
  return {
    runs: async (request, principal) =>
      listRuns(bus, principal, RunsQuerySchema.parse(request.query ?? {})).catch((err: unknown) => {
        throw asQueryError(err, request.mode);
      }),
    run: async (request, principal) => {
      const { subRunId } = request.fields;
      return getRun(bus, principal, { ...runOf(request), ...(subRunId !== undefined ? { subRunId } : {}) });
    },
    run_logs: async (request, principal) => {
      const { tail } = RunLogsQuerySchema.parse(request.query ?? {});
      return getRunLogs(bus, principal, { ...runOf(request), ...(tail !== undefined ? { tail } : {}) });
    },
    step_log: async (request, principal) => {
      const { subRunId, item, bodyStepName, stepName } = request.fields;
      const query = request.query === undefined ? undefined : StepLogQuerySchema.parse(request.query);
      const payload = {
        ...runOf(request),
        ...(subRunId !== undefined ? { subRunId } : {}),
        stepName: stepName ?? '',
        ...(item !== undefined ? { item } : {}),
        ...(bodyStepName !== undefined ? { bodyStepName } : {}),
        ...(query !== undefined ? { query } : {}),
      };
      return getStepLog(bus, principal, payload);
    },
    foreach_items: async (request, principal) => {
      const query = request.query === undefined ? undefined : ForeachItemsQuerySchema.parse(request.query);
      return listForeachItems(bus, principal, { ...foreachStepOf(request), ...(query !== undefined ? { query } : {}) });
    },
    foreach_item: async (request, principal) =>
      getForeachItem(bus, principal, { ...foreachStepOf(request), item: request.fields.item ?? '' }),
  };
}

function foreachStepOf(request: ReadRequest): {
  dagName: string;
  dagRunId: string;
  subRunId?: string;
  stepName: string;
} {
  const { subRunId, stepName } = request.fields;
  return { ...runOf(request), ...(subRunId !== undefined ? { subRunId } : {}), stepName: stepName ?? '' };
}

function runOf(request: ReadRequest): { dagName: string; dagRunId: string } {
  return { dagName: request.fields.name ?? '', dagRunId: request.fields.dagRunId ?? '' };
}

/**
 * Wraps the `dag` backend so the DAG detail model carries `latestRun
 * {dagRunId, status, statusLabel}` once the DAG has run (021 DAG detail
 * model), read with `run.latest` ({@link getLatestRuns}). The DAG is read first, so an unknown DAG
 * fails as dag-service says; when run-service cannot answer, the detail is
 * returned without `latestRun` rather than failing the read.
 */
export function withLatestRun(dagBackend: ReadBackend, bus: BusClient): ReadBackend {
  return async (request: ReadRequest, principal: Principal) => {
    const detail = await dagBackend(request, principal);
    const name = typeof detail.name === 'string' ? detail.name : (request.fields.name ?? '');
    try {
      const { latest } = await getLatestRuns(bus, principal, { dagNames: [name] });
      const run = latest[name];
      return run === undefined
        ? detail
        : { ...detail, latestRun: { dagRunId: run.dagRunId, status: run.status, statusLabel: run.statusLabel } };
    } catch {
      return detail;
    }
  };
}

/**
 * A bad `cursor` inside the runs query is a query fault of the input that
 * carried it (021 §Query handling): `invalid_tool_input` on `query` in target
 * mode, `invalid_resource_uri` on `uri` in URI mode.
 */
function asQueryError(err: unknown, mode: 'target' | 'uri'): unknown {
  if (!(err instanceof DaguError) || err.field !== 'cursor') return err;
  return mode === 'target'
    ? new DaguError('invalid_tool_input', err.message, { field: 'query', details: { parameter: 'cursor' } })
    : new DaguError('invalid_resource_uri', err.message, { field: 'uri', details: { parameter: 'cursor' } });
}
