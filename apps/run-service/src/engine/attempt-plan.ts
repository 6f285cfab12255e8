import type { HandlerKind } from '@dagu-mcp/dag-spec';
import { StepStatus, type StepStatusCode } from '@dagu-mcp/contracts';
import { formatUri } from '../core/run-id';
import type { RunRecord, StepRecord } from '../store/run-rows';
import type { AttemptPlan } from './attempt-runner';
import { dagOfSnapshot, nodesOfDag } from '../core/dag-nodes';
import { workspaceOfLabels } from '../core/workspace';
import type { NodeSpec, NodeState } from '../core/run-types';

/**
 * Builds what an attempt runs from the stored run and the step rows of its
 * current attempt: the spec snapshot is parsed again, every node gets its
 * stored state (kept nodes of a retry from a step are already done) and
 * `init` runs only when no step is done yet (first attempt, whole retry).
 *
 * @throws Error when the spec snapshot does not validate any more or a step
 *   row is missing (a bug).
 */
export function planAttempt(run: RunRecord, rows: readonly StepRecord[], schedulerStartLine: number): AttemptPlan {
  const dag = dagOfSnapshot(run.spec, run.dag_name);
  const nodes = nodesOfDag(dag);
  const bySeq = new Map(rows.map((row) => [row.seq, row]));
  const stateOf = (node: NodeSpec): NodeState => {
    const row = bySeq.get(node.seq);
    if (row === undefined || row.name !== node.name) throw new Error(`step row ${node.seq} (${node.name}) is missing`);
    return stateFromRow(row);
  };
  const states = new Map<string, NodeState>(nodes.steps.map((node) => [node.name, stateOf(node)]));
  const handlerStates = new Map<HandlerKind, NodeState>();
  for (const [kind, node] of nodes.handlers)
    handlerStates.set(kind, { ...stateOf(node), status: StepStatus.notStarted });
  const anyDone = [...states.values()].some((state) => state.status !== StepStatus.notStarted);
  return {
    identity: {
      runPk: run.pk,
      dagName: run.dag_name,
      dagRunId: run.dag_run_id,
      attemptNo: run.attempt_no,
      attemptId: run.attempt_id,
      logsUri: formatUri.runLogs(run.dag_name, run.dag_run_id),
      ...(run.started_by !== null ? { startedBy: run.started_by } : {}),
    },
    dag,
    spec: run.spec,
    params: run.resolved_params,
    paramsEvaluated: run.params_evaluated,
    steps: nodes.steps,
    handlers: nodes.handlers,
    states,
    handlerStates,
    runInit: !anyDone,
    schedulerLog: { id: run.scheduler_log, startLine: schedulerStartLine },
    ...(run.profile !== null ? { profile: { workspace: workspaceOfLabels(dag.labels), name: run.profile } } : {}),
  };
}

function stateFromRow(row: StepRecord): NodeState {
  const status = toStepStatus(row.status);
  const state: NodeState = {
    status,
    retryCount: row.retry_count,
    allowedFailure: row.allowed_failure,
    outputs: row.outputs,
    stdoutLog: row.stdout_log,
    stderrLog: row.stderr_log,
  };
  if (row.error !== null) state.error = row.error;
  if (row.started_at !== null) state.startedAt = row.started_at;
  if (row.finished_at !== null) state.finishedAt = row.finished_at;
  if (row.exit_code !== null) state.exitCode = row.exit_code;
  return state;
}

const STEP_STATUSES: readonly StepStatusCode[] = Object.values(StepStatus);

/** A stored step status; a value outside the enum means the row was written by something else: fail loudly. */
function toStepStatus(value: number): StepStatusCode {
  const status = STEP_STATUSES.find((known) => known === value);
  if (status === undefined) throw new Error(`run store: step status ${value} is not a step status (dagu-model §1)`);
  return status;
}
