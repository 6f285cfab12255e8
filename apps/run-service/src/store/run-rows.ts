import { z } from 'zod';
import { ActorSchema } from '../core/started-by';

/**
 * Stored shapes of runs and steps (tables in store/migrations.ts) as the
 * repositories hand them out. Rows are parsed, not cast, so a schema drift
 * fails loudly as an `internal_error`. `bigint` columns arrive as strings
 * from pg and are coerced (ids stay far below 2^53).
 */

/** Columns of a run row. */
export const RUN_COLUMNS =
  'pk, dag_name, dag_run_id, attempt_no, attempt_id, status, error, params, resolved_params, params_evaluated, labels, queue, inline, spec, ' +
  'created_at, queued_at, started_at, finished_at, owner, heartbeat_at, stop_requested_at, scheduler_log, started_by, profile';

const ParamSchema = z.object({ name: z.string(), value: z.string(), fromDefault: z.boolean() });

const RunRowSchema = z.object({
  pk: z.coerce.number().int(),
  dag_name: z.string(),
  dag_run_id: z.string(),
  attempt_no: z.number().int(),
  attempt_id: z.string(),
  status: z.number().int(),
  error: z.string().nullable(),
  params: z.string(),
  resolved_params: z.array(ParamSchema),
  params_evaluated: z.boolean(),
  labels: z.array(z.string()),
  queue: z.string(),
  inline: z.boolean(),
  spec: z.string(),
  created_at: z.date(),
  queued_at: z.date().nullable(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  owner: z.string().nullable(),
  heartbeat_at: z.date().nullable(),
  stop_requested_at: z.date().nullable(),
  scheduler_log: z.coerce.number().int(),
  started_by: ActorSchema.nullable(),
  profile: z.string().nullable(),
});

/** A stored run. */
export type RunRecord = z.output<typeof RunRowSchema>;

/** Parses a row selected with {@link RUN_COLUMNS}. @throws ZodError on a drifted row. */
export function parseRunRow(row: unknown): RunRecord {
  return RunRowSchema.parse(row);
}

/** Columns of a step row. */
export const STEP_COLUMNS =
  'seq, name, step_id, handler, status, error, started_at, finished_at, retry_count, exit_code, allowed_failure, outputs, stdout_log, stderr_log, checkpoint';

const OutputsSchema = z.object({
  outputs: z.record(z.string(), z.string()).optional(),
  fields: z.record(z.string(), z.string()).optional(),
  variable: z.object({ name: z.string(), value: z.string() }).optional(),
  skipReason: z.object({ condition: z.string(), expected: z.string(), actual: z.string() }).optional(),
});

const StepRowSchema = z.object({
  seq: z.number().int(),
  name: z.string(),
  step_id: z.string().nullable(),
  handler: z.string().nullable(),
  status: z.number().int(),
  error: z.string().nullable(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  retry_count: z.number().int(),
  exit_code: z.number().int().nullable(),
  allowed_failure: z.boolean(),
  outputs: OutputsSchema,
  stdout_log: z.coerce.number().int(),
  stderr_log: z.coerce.number().int(),
  checkpoint: z.unknown().nullable(),
});

/** A stored step (or handler) of one attempt. */
export type StepRecord = z.output<typeof StepRowSchema>;

/** Parses a row selected with {@link STEP_COLUMNS}. @throws ZodError on a drifted row. */
export function parseStepRow(row: unknown): StepRecord {
  return StepRowSchema.parse(row);
}

/** The stored resolved params (`resolved_params` column) or `undefined` when the run never started. */
export type StoredParams = z.output<typeof ParamSchema>[];

/**
 * A pool or a client inside a transaction: anything that runs one statement.
 * Rows come back as `unknown` and are parsed with a schema
 * ({@link parseRows}), never cast.
 */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Parses every row of a result. @throws ZodError on a row of another shape (a bug or a schema drift). */
export function parseRows<S extends z.ZodType>(schema: S, result: { rows: unknown[] }): Array<z.output<S>> {
  return result.rows.map((row) => schema.parse(row));
}

/** Parses the first row, or `undefined` when there is none. */
export function parseFirstRow<S extends z.ZodType>(schema: S, result: { rows: unknown[] }): z.output<S> | undefined {
  const row = result.rows[0];
  return row === undefined ? undefined : schema.parse(row);
}
