import { z } from 'zod';
import { ForeachItemsQuerySchema, RunsQuerySchema, StepLogQuerySchema } from './read-query';

/**
 * run-service op payloads and replies (issue: run engine core). Shapes follow
 * 021 (run detail, run logs, step log, run collection), 036 and dagu-model
 * §1, §5, §6. Models are loose objects: services may add fields (021 allows
 * extra fields inside `data`).
 */

const DagName = z.string().min(1).max(40);
const DagRunId = z
  .string()
  .regex(/^[-a-zA-Z0-9_]+$/)
  .max(64);
const Timestamp = z.string();

/**
 * `run.start`: start (or enqueue) a run of `spec` under `dagName`. An inline
 * spec (`inline: true`) is passed as given and required. A stored DAG
 * (`inline: false`) goes by name without `spec`: run-service reads the stored
 * YAML itself (its `dag.spec` cache, kept exact by dag-service's change
 * announcements); run-service's bus handler refuses a `spec` sent with it
 * (only its own scheduler, in-process, passes the YAML it read).
 * The run keeps a snapshot of it.
 * Errors: `invalid_tool_input` (spec invalid, details.errors; an inline start
 * without a spec, a stored one with a spec), `resource_not_found` (no stored DAG of that name, with
 * `details.didYouMean`), `conflict` (run id used, or singleton clash).
 */
export const RunStartRequestSchema = z.strictObject({
  dagName: DagName,
  spec: z.string().min(1).optional(),
  inline: z.boolean(),
  enqueue: z.boolean(),
  dagRunId: DagRunId.optional(),
  /** Params string: `A=1 B=2`, or compact JSON (036 re-encodes objects). */
  params: z.string().optional(),
  queue: z.string().min(1).optional(),
  labels: z.array(z.string().min(1)).optional(),
  singleton: z.boolean().optional(),
  /** Runtime profile for this run (Dagu spec 022b), overriding the DAG's and the workspace default. */
  profile: z.string().min(1).max(40).optional(),
});
export type RunStartRequest = z.infer<typeof RunStartRequestSchema>;

/** Identity and status of a run after a control action. */
export const RunRefSchema = z.looseObject({
  dagName: z.string(),
  dagRunId: z.string(),
  attemptId: z.string().optional(),
  status: z.number().int(),
  statusLabel: z.string(),
});
export type RunRef = z.infer<typeof RunRefSchema>;

/** `run.retry`: new attempt of the same run id (036); with `stepName` only that step (+ downstream). */
export const RunRetryRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  stepName: z.string().min(1).optional(),
  includeDownstream: z.boolean().optional(),
});

/** `run.stop`: abort a running or waiting run (036). Not running → `invalid_tool_input`. */
export const RunStopRequestSchema = z.strictObject({ dagName: DagName, dagRunId: DagRunId });

/** `run.get`: the run-detail model (021, dagu-model §5); `subRunId` addresses a child run. */
export const RunGetRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  subRunId: DagRunId.optional(),
});

/**
 * The run id that, wherever a run is read (`dagu_read`, `dagu://runs/…`,
 * REST reads, stop and retry), names the latest run of the DAG, resolved at
 * read time. A new run may not take it as its id.
 */
export const LATEST_RUN_ID = 'latest';

/** How to decide a waiting step over REST (dagu-model §5 `answer`). */
export const StepAnswerSchema = z.object({
  method: z.literal('POST'),
  path: z.string(),
  role: z.string(),
  surface: z.string(),
});
export type StepAnswer = z.infer<typeof StepAnswerSchema>;

/** Why a precondition skipped a step (dagu-model §5 `skipReason`). */
export const SkipReasonSchema = z.object({ condition: z.string(), expected: z.string(), actual: z.string() });

/** One step entry of a run detail (021 run detail model, dagu-model §5). */
export const RunStepSchema = z.looseObject({
  name: z.string(),
  status: z.number().int(),
  statusLabel: z.string(),
  logUri: z.string(),
  startedAt: Timestamp.optional(),
  finishedAt: Timestamp.optional(),
  error: z.string().optional(),
  skipReason: SkipReasonSchema.optional(),
  answer: StepAnswerSchema.optional(),
});

/** The run-detail model (021). */
export const RunDetailSchema = z.looseObject({
  name: z.string(),
  dagRunId: z.string(),
  uri: z.string(),
  logsUri: z.string().optional(),
  attemptId: z.string().optional(),
  status: z.number().int(),
  statusLabel: z.string(),
  startedAt: Timestamp.optional(),
  finishedAt: Timestamp.optional(),
  steps: z.array(RunStepSchema),
});
export type RunDetail = z.infer<typeof RunDetailSchema>;

/** `run.list`: the `runs` query of 021. */
export const RunListRequestSchema = RunsQuerySchema;
export const RunSummarySchema = z.looseObject({
  name: z.string(),
  dagRunId: z.string(),
  uri: z.string(),
  status: z.number().int(),
  statusLabel: z.string(),
  startedAt: Timestamp.optional(),
  finishedAt: Timestamp.optional(),
});
export const RunListReplySchema = z.looseObject({
  items: z.array(RunSummarySchema),
  nextCursor: z.string().optional(),
});

/** `run.logs`: the run-log model (021): scheduler log (tail, default 500) and per-step stream flags. */
export const RunLogsRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  tail: z.number().int().min(1).max(10000).optional(),
});
export const RunLogsReplySchema = z.looseObject({
  schedulerLog: z.looseObject({
    content: z.string(),
    lineCount: z.number().int(),
    totalLines: z.number().int(),
    hasMore: z.boolean(),
  }),
  stepLogs: z.array(
    z.looseObject({
      stepName: z.string(),
      status: z.number().int(),
      statusLabel: z.string(),
      hasStdout: z.boolean(),
      hasStderr: z.boolean(),
    }),
  ),
});

/** `run.stepLog`: one step's stdout/stderr with the reader options of dagu-model §6 (default: last 1000 lines). */
export const StepLogRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  subRunId: DagRunId.optional(),
  stepName: z.string().min(1),
  item: z.string().optional(),
  bodyStepName: z.string().optional(),
  query: StepLogQuerySchema.optional(),
});
export const StepLogReplySchema = z.looseObject({
  stdoutContent: z.string(),
  stderrContent: z.string(),
  lineCount: z.number().int(),
  totalLines: z.number().int(),
  hasMore: z.boolean(),
  /** The read was cut at its byte bound (run-service `RUN_LOG_READ_MAX_BYTES`); absent when whole. */
  truncated: z.boolean().optional(),
  /** The same for stderr, when both streams are read. */
  stderrTruncated: z.boolean().optional(),
});

/**
 * `run.humanTask`: complete the open human task of step `stepName` (name or
 * id) of a waiting run. `values` are validated against the task's form and
 * become the step's outputs; the run then resumes by itself (a new attempt).
 * Errors: `resource_not_found`, `conflict` (the run or step is not waiting
 * on a human task), `invalid_tool_input` (`values`, details.errors).
 */
export const RunHumanTaskRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  stepName: z.string().min(1),
  values: z.record(z.string(), z.unknown()).optional(),
});

/**
 * `run.approval`: decide the approval gate of step `stepName` of a waiting
 * run. `approve` → the step succeeds (its `input` values become outputs;
 * `required` ones must be given) and the run resumes; `reject` → the step
 * and the run end `rejected` (8).
 */
export const RunApprovalRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  stepName: z.string().min(1),
  decision: z.enum(['approve', 'reject']),
  input: z.record(z.string(), z.string()).optional(),
});

/** `run.foreachItems`: the foreach-items model (021) of a foreach step, one page. */
export const ForeachItemsRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  subRunId: DagRunId.optional(),
  stepName: z.string().min(1),
  query: ForeachItemsQuerySchema.optional(),
});
export const ForeachItemsReplySchema = z.looseObject({
  total: z.number().int(),
  counts: z.looseObject({
    notStarted: z.number().int(),
    running: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    aborted: z.number().int(),
  }),
  items: z.array(
    z.looseObject({
      item: z.string(),
      index: z.number().int(),
      key: z.string(),
      status: z.number().int(),
      statusLabel: z.string(),
    }),
  ),
});

/** `run.foreachItem`: the foreach-item model (021): one item and its body steps. */
export const ForeachItemRequestSchema = z.strictObject({
  dagName: DagName,
  dagRunId: DagRunId,
  subRunId: DagRunId.optional(),
  stepName: z.string().min(1),
  item: z.string().min(1),
});
export const ForeachItemReplySchema = z.looseObject({
  item: z.string(),
  key: z.string(),
  index: z.number().int(),
  status: z.number().int(),
  statusLabel: z.string(),
  steps: z.array(
    z.looseObject({
      name: z.string(),
      status: z.number().int(),
      statusLabel: z.string(),
      hasStdout: z.boolean(),
      hasStderr: z.boolean(),
    }),
  ),
});

/** `run.latest`: the latest run of each named DAG (for 021 `dag.latestRun`). Names without runs are absent. */
export const RunLatestRequestSchema = z.strictObject({ dagNames: z.array(DagName).max(200) });
export const RunLatestReplySchema = z.object({
  latest: z.record(z.string(), z.object({ dagRunId: z.string(), status: z.number().int(), statusLabel: z.string() })),
});

/**
 * A run status change, published by run-service on the Redis channel
 * `runEventsChannel(prefix)` as JSON whenever a run's status changes. The
 * gateway relays it to waits (036) and subscriptions (dagu-model §8).
 */
export const RunEventSchema = z.object({
  name: z.string(),
  dagRunId: z.string(),
  /** Set for child runs: the root run they are addressed under. */
  root: z.object({ name: z.string(), dagRunId: z.string() }).optional(),
  attemptId: z.string().optional(),
  status: z.number().int(),
  statusLabel: z.string(),
  at: Timestamp,
});
export type RunEvent = z.infer<typeof RunEventSchema>;

/** The pub/sub channel of run events under a bus prefix. */
export function runEventsChannel(prefix: string): string {
  return `${prefix}:events:runs`;
}

/**
 * A step's state as just written to PostgreSQL (the console's run page updates
 * step by step without polling). run-service publishes it on `stepEventsChannel(prefix)` after
 * the write-behind step-state writer committed the row, so a reader that reacts by reading the
 * run sees at least this state. Several transitions of one step between two writes are
 * coalesced: the event carries the newest state. `name`/`dagRunId` are the run's own (a child
 * run's, for a sub-run), `attemptNo` its attempt number. Timestamps are ISO 8601.
 */
export const StepEventSchema = z.object({
  name: z.string(),
  dagRunId: z.string(),
  attemptNo: z.number().int(),
  step: z.string(),
  status: z.number().int(),
  statusLabel: z.string(),
  startedAt: Timestamp.optional(),
  finishedAt: Timestamp.optional(),
  error: z.string().optional(),
  at: Timestamp,
});
export type StepEvent = z.infer<typeof StepEventSchema>;

/** The pub/sub channel of step events under a bus prefix (apart from run events: their listeners stay as they are). */
export function stepEventsChannel(prefix: string): string {
  return `${prefix}:events:steps`;
}
