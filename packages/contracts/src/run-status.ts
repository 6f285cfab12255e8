/**
 * DAG-run and step status ints and their labels (dagu-model §1; Dagu spec 021
 * `status` / `statusLabel`). The numbers are the wire and storage values:
 * services and clients compare against these names, never against raw ints.
 * What a status *means* for a run's outcome (rollup rules) is the run
 * engine's business and lives in run-service's core.
 */

/** DAG-run status ints (dagu-model §1). */
export const RunStatus = {
  notStarted: 0,
  running: 1,
  failed: 2,
  aborted: 3,
  succeeded: 4,
  queued: 5,
  partiallySucceeded: 6,
  waiting: 7,
  rejected: 8,
} as const;
export type RunStatusCode = (typeof RunStatus)[keyof typeof RunStatus];

/** Step (node) status ints (dagu-model §1); 9 = retrying between tries. */
export const StepStatus = {
  notStarted: 0,
  running: 1,
  failed: 2,
  aborted: 3,
  succeeded: 4,
  skipped: 5,
  partiallySucceeded: 6,
  waiting: 7,
  rejected: 8,
  retrying: 9,
} as const;
export type StepStatusCode = (typeof StepStatus)[keyof typeof StepStatus];

/** DAG-run status labels, indexed by status int (dagu-model §1). */
export const RUN_STATUS_LABELS = [
  'not_started',
  'running',
  'failed',
  'aborted',
  'succeeded',
  'queued',
  'partially_succeeded',
  'waiting',
  'rejected',
] as const;
export type RunStatusLabel = (typeof RUN_STATUS_LABELS)[number];
/** Step (node) status labels, indexed by status int (dagu-model §1); 9 = retrying. */
export const STEP_STATUS_LABELS = [
  'not_started',
  'running',
  'failed',
  'aborted',
  'succeeded',
  'skipped',
  'partially_succeeded',
  'waiting',
  'rejected',
  'retrying',
] as const;

/** Terminal run statuses: a `wait` ends at these (036). */
export const TERMINAL_RUN_STATUSES: ReadonlySet<number> = new Set<number>([
  RunStatus.failed,
  RunStatus.aborted,
  RunStatus.succeeded,
  RunStatus.partiallySucceeded,
  RunStatus.rejected,
]);
/** The waiting checkpoint (human task or approval gate): ends a `wait` with `completed=false`. */
export const WAITING_RUN_STATUS = RunStatus.waiting;

/** Run statuses of an active run: a retry refuses them (036: running, queued, waiting → conflict); queues count running and waiting. */
export const ACTIVE_RUN_STATUSES: readonly number[] = [RunStatus.running, RunStatus.queued, RunStatus.waiting];

/** Run statuses of a run that ended: `finished_at` is set, retention may delete it (not started counts: it never will). */
export const ENDED_RUN_STATUSES: readonly number[] = [
  RunStatus.notStarted,
  RunStatus.failed,
  RunStatus.aborted,
  RunStatus.succeeded,
  RunStatus.partiallySucceeded,
  RunStatus.rejected,
];

/** The label of a run status; `unknown` for an int outside the enum. */
export function runStatusLabel(status: number): string {
  return RUN_STATUS_LABELS[status] ?? 'unknown';
}

/** The label of a step status; `unknown` for an int outside the enum. */
export function stepStatusLabel(status: number): string {
  return STEP_STATUS_LABELS[status] ?? 'unknown';
}
