import { DaguError, StepStatus, TERMINAL_RUN_STATUSES, type StepLogQuery, stepStatusLabel } from '@dagu-mcp/contracts';
import { ReplicaDeclined, type Pool } from '@dagu-mcp/runtime';
import { emptyRead, readStreamTotals, readWithTotal, type StreamRead } from '../store/log-reader';
import { DEFAULT_SCHEDULER_TAIL, selectionOf } from '../core/log-window';
import { DEFAULT_LOG_READ_MAX_BYTES } from '../core/log-bytes';
import { runNotFound, withStorageErrors } from '../store/storage-errors';
import { findRun, loadSteps } from '../store/run.repository';
import { findSubRunOf } from '../store/run-links.repository';
import { subRunNotFound } from './sub-run-detail';
import { findBodyStep } from './foreach-read';

/**
 * `run.logs` (021 run-log model) and `run.stepLog` (021 step-log model) with
 * the reader options of dagu-model §6 (`log-window.ts`). Logs are those of
 * the run's current attempt; a step kept by a retry from a step shows the log
 * of the attempt that ran it. Lifecycle handlers are listed and readable by
 * their step names (`onExit`, …).
 */

/** Step statuses whose logs are written in full (the step will not write again in this attempt). */
const ENDED_STEP_STATUSES: ReadonlySet<number> = new Set<number>([
  StepStatus.failed,
  StepStatus.aborted,
  StepStatus.succeeded,
  StepStatus.skipped,
  StepStatus.partiallySucceeded,
  StepStatus.rejected,
]);

/**
 * The run-log model: scheduler log (tail, default 500 lines) and each node's stream flags.
 *
 * @param endedOnly  read from a replica: a run that has not ended throws `ReplicaDeclined`
 */
export async function readRunLogs(
  pool: Pool,
  input: { dagName: string; dagRunId: string; tail?: number },
  maxBytes = DEFAULT_LOG_READ_MAX_BYTES,
  endedOnly = false,
) {
  return withStorageErrors(async () => {
    const run = await findRun(pool, input.dagName, input.dagRunId);
    if (run === undefined) throw runNotFound(input.dagName, input.dagRunId);
    if (endedOnly && !TERMINAL_RUN_STATUSES.has(run.status)) throw new ReplicaDeclined('run not ended');
    const steps = await loadSteps(pool, run.pk, run.attempt_no);
    const totals = await readStreamTotals(pool, [
      run.scheduler_log,
      ...steps.flatMap((step) => [step.stdout_log, step.stderr_log]),
    ]);
    const schedulerLog = await readWithTotal(
      pool,
      run.scheduler_log,
      totals.get(run.scheduler_log) ?? 0,
      { kind: 'tail', count: input.tail ?? DEFAULT_SCHEDULER_TAIL },
      maxBytes,
    );
    return {
      schedulerLog,
      stepLogs: steps.map((step) => ({
        stepName: step.name,
        ...(step.handler !== null ? { handler: step.handler } : {}),
        status: step.status,
        statusLabel: stepStatusLabel(step.status),
        hasStdout: (totals.get(step.stdout_log) ?? 0) > 0,
        hasStderr: (totals.get(step.stderr_log) ?? 0) > 0,
      })),
    };
  });
}

/** What `run.stepLog` addresses. */
export interface StepLogInput {
  dagName: string;
  dagRunId: string;
  stepName: string;
  subRunId?: string;
  item?: string;
  bodyStepName?: string;
  query?: StepLogQuery;
}

/**
 * The step-log model: stdout and stderr with one selection applied to each,
 * each at most `maxBytes` of UTF-8 (`RUN_LOG_READ_MAX_BYTES`);
 * `lineCount`, `totalLines`, `hasMore` and `truncated` follow stdout unless
 * the query asks for stderr only (`stderrTruncated` for stderr beside it). A
 * stream the query excludes is empty.
 *
 * Errors: `resource_not_found` — no such run, no such step (steps first,
 * then handlers, by name), or a child-run / foreach address (not supported
 * by this engine yet).
 *
 * @param endedOnly  read from a replica: a step that has not ended throws `ReplicaDeclined`
 */
export async function readStepLog(
  pool: Pool,
  input: StepLogInput,
  maxBytes = DEFAULT_LOG_READ_MAX_BYTES,
  endedOnly = false,
) {
  if ((input.item === undefined) !== (input.bodyStepName === undefined)) {
    throw new DaguError('invalid_tool_input', 'item and bodyStepName go together.', {
      field: input.item === undefined ? 'item' : 'bodyStepName',
    });
  }
  return withStorageErrors(async () => {
    const { item, bodyStepName } = input;
    const step =
      item !== undefined && bodyStepName !== undefined
        ? await findBodyStep(pool, { ...input, item, bodyStepName })
        : await findRunStep(pool, input);
    if (step === undefined) {
      throw new DaguError('resource_not_found', `The run ${input.dagRunId} has no step named ${input.stepName}.`, {
        field: 'stepName',
      });
    }
    if (endedOnly && !ENDED_STEP_STATUSES.has(step.status)) throw new ReplicaDeclined('step not ended');
    const selection = selectionOf(input.query);
    const stream = input.query?.stream;
    const totals = await readStreamTotals(pool, [step.stdout_log, step.stderr_log]);
    const read = (id: number, wanted: boolean): Promise<StreamRead> =>
      wanted ? readWithTotal(pool, id, totals.get(id) ?? 0, selection, maxBytes) : Promise.resolve(emptyRead());
    const [stdout, stderr] = await Promise.all([
      read(step.stdout_log, stream !== 'stderr'),
      read(step.stderr_log, stream !== 'stdout'),
    ]);
    const primary = stream === 'stderr' ? stderr : stdout;
    return {
      stepName: step.name,
      status: step.status,
      statusLabel: stepStatusLabel(step.status),
      stdoutContent: stdout.content,
      stderrContent: stderr.content,
      lineCount: primary.lineCount,
      totalLines: primary.totalLines,
      hasMore: primary.hasMore,
      ...(primary.truncated ? { truncated: true } : {}),
      ...(stream === undefined
        ? { stderrLineCount: stderr.lineCount, stderrTotalLines: stderr.totalLines, stderrHasMore: stderr.hasMore }
        : {}),
      ...(stream === undefined && stderr.truncated ? { stderrTruncated: true } : {}),
    };
  });
}

/** The step (then handler) `stepName` of a root or child run's current attempt, or `undefined`. */
async function findRunStep(
  pool: Pool,
  input: StepLogInput,
): Promise<{ name: string; status: number; stdout_log: number; stderr_log: number } | undefined> {
  const subRunId = input.subRunId;
  const run =
    subRunId !== undefined
      ? await findSubRunOf(pool, input.dagName, input.dagRunId, subRunId)
      : await findRun(pool, input.dagName, input.dagRunId);
  if (run === undefined)
    throw subRunId !== undefined
      ? subRunNotFound(input.dagRunId, subRunId)
      : runNotFound(input.dagName, input.dagRunId);
  const steps = await loadSteps(pool, run.pk, run.attempt_no);
  return (
    steps.find((s) => s.handler === null && s.name === input.stepName) ?? steps.find((s) => s.name === input.stepName)
  );
}
