import { LATEST_RUN_ID, RunStatus } from '@dagu-mcp/contracts';
import type { NormalizedDag } from '@dagu-mcp/dag-spec';
import type { NodeSpec } from '../core/run-types';
import type { RunParam } from '../core/params';
import { parseRunRow, parseStepRow, RUN_COLUMNS, STEP_COLUMNS, type RunRecord, type StepRecord } from './run-rows';
import { z } from 'zod';
import { parseFirstRow, parseRows, type Queryable } from './run-rows';
import { ACTIVE_RUNS_SQL, OWNED_RUNS_SQL } from './status-sql';
import type { Actor } from '../core/started-by';

/**
 * Runs, attempts and step rows (store/migrations.ts): creation, lookup and the
 * status transitions of a run. Statements only; the callers own transactions.
 */

/** A run to create. */
export interface NewRun {
  dagName: string;
  dagRunId: string;
  attemptId: string;
  /** 1 running (started now, by `owner`) or 5 queued. */
  status: number;
  params: string;
  mergedParams: readonly RunParam[];
  labels: readonly string[];
  queue: string;
  maxActiveRuns: number;
  inline: boolean;
  spec: string;
  normalized: NormalizedDag;
  nodes: readonly NodeSpec[];
  requestId: string;
  owner?: string;
  /** Who started it (dagu-model §5 `startedBy`). */
  startedBy?: Actor;
  /** The runtime profile it runs with (Dagu spec 022b), recorded with the run. */
  profile?: string;
}

const IdRowSchema = z.object({ id: z.coerce.number().int() });
const RequestRowSchema = z.object({ request_id: z.string().nullable() });
const FinishedRowSchema = z.object({ finished_at: z.date() });

/** Allocates `count` log streams; returns their ids. */
export async function createLogStreams(db: Queryable, count: number): Promise<number[]> {
  if (count === 0) return [];
  const result = await db.query(
    'INSERT INTO log_streams (total_lines) SELECT 0 FROM generate_series(1, $1) RETURNING id',
    [count],
  );
  return parseRows(IdRowSchema, result).map((row) => row.id);
}

/** Inserts fresh (not started) rows for `nodes` in attempt `attemptNo`, each with two new log streams. */
export async function insertFreshSteps(
  db: Queryable,
  runPk: number,
  attemptNo: number,
  nodes: readonly NodeSpec[],
): Promise<void> {
  if (nodes.length === 0) return;
  const ids = await createLogStreams(db, nodes.length * 2);
  await db.query(
    `INSERT INTO run_steps (run_pk, attempt_no, seq, name, step_id, handler, stdout_log, stderr_log)
     SELECT $1, $2, * FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[])`,
    [runPk, attemptNo, ...stepColumns(nodes, ids)],
  );
}

/** The unnest columns naming fresh step rows: seq, name, step id, handler. */
function nodeColumns(nodes: readonly NodeSpec[]): unknown[] {
  return [
    nodes.map((node) => node.seq),
    nodes.map((node) => node.name),
    nodes.map((node) => node.step.id ?? null),
    nodes.map((node) => node.handler ?? null),
  ];
}

/** {@link nodeColumns}, then the stdout and stderr stream ids (`ids`, two per node). */
function stepColumns(nodes: readonly NodeSpec[], ids: readonly number[]): unknown[] {
  return [...nodeColumns(nodes), nodes.map((_, i) => ids[2 * i]), nodes.map((_, i) => ids[2 * i + 1])];
}

/**
 * A run as {@link insertRun} created it: its row and its first attempt's step
 * rows, exactly as a read of them right after the commit returns them (the
 * engine plans a fresh run from these instead of reading them again).
 */
export interface InsertedRun {
  pk: number;
  run: RunRecord;
  /** Step and handler rows of attempt 1, in `seq` order, all not started. */
  steps: StepRecord[];
}

const InsertedStepsSchema = z.object({ steps: z.array(z.unknown()) });

/**
 * What else {@link insertRun}'s statement does: see there.
 */
export interface InsertRunOptions {
  /**
   * Epoch ms after which the statement inserts nothing (PostgreSQL's clock, read once while it
   * runs): for a start outside a transaction, where no check can sit between the statement and its
   * commit (020 §Errors: no mutation applied after its deadline). Omitted: no gate.
   */
  readonly deadline?: number;
  /** A mutation record to write in the same statement, for each inserted run (`mutationRecordInsert` with source `r`). */
  readonly record?: (firstParam: number) => { sql: string; values: unknown[] };
}

/**
 * Inserts the run, its first attempt, its log streams and its step rows in one
 * statement (one round trip; the scheduler log is stream 1, then
 * stdout and stderr of each node in `seq` order) and returns what it wrote.
 * With `options.record` the same statement writes the run's mutation record
 * (and its reply), so a start needs no transaction of its own; with
 * `options.deadline` it writes nothing once PostgreSQL's clock has passed it.
 * A started run's `started_at` (and first heartbeat) is the insert's own time
 * (`clock_timestamp()`), as everywhere a run starts: a transaction's `now()`
 * is its start, which may come before a lock wait. Every row is checked by
 * the schemas of run-rows.ts, as any read of them is.
 *
 * @returns the rows written, or `undefined` when the deadline had passed (nothing was written)
 * @throws Error when PostgreSQL returns no row without a deadline (a bug); pg errors as they come
 *   (a taken run id, or a held idempotency key, is a unique violation)
 */
export async function insertRun(
  db: Queryable,
  run: NewRun,
  options?: InsertRunOptions & { deadline?: undefined },
): Promise<InsertedRun>;
export async function insertRun(
  db: Queryable,
  run: NewRun,
  options: InsertRunOptions,
): Promise<InsertedRun | undefined>;
export async function insertRun(
  db: Queryable,
  run: NewRun,
  options: InsertRunOptions = {},
): Promise<InsertedRun | undefined> {
  const started = run.status === RunStatus.running;
  const values: unknown[] = [
    run.dagName,
    run.dagRunId,
    run.attemptId,
    run.status,
    run.params,
    JSON.stringify(run.mergedParams),
    run.labels,
    run.queue,
    run.maxActiveRuns,
    run.inline,
    run.spec,
    JSON.stringify(run.normalized),
    run.requestId,
    started,
    run.owner ?? null,
    run.startedBy === undefined ? null : JSON.stringify(run.startedBy),
    run.profile ?? null,
    ...nodeColumns(run.nodes),
    1 + run.nodes.length * 2,
    options.deadline ?? null,
  ];
  const record = options.record?.(values.length + 1);
  // `gate` is read once (materialized): every row below hangs off `ids`, so a closed gate writes nothing.
  // `ids` is materialized once (nextval is volatile); foreign keys are checked at the end of the
  // statement, when the streams the run and its steps point at exist.
  const inserted = await db.query(
    `WITH gate AS MATERIALIZED (
       SELECT $23::float8 IS NULL OR clock_timestamp() < to_timestamp($23::float8 / 1000) AS open),
     ids AS MATERIALIZED (
       SELECT g, nextval(pg_get_serial_sequence('log_streams', 'id')) AS id
         FROM gate, generate_series(1, $22::int) g WHERE gate.open),
     ls AS (INSERT INTO log_streams (id, total_lines) SELECT id, 0 FROM ids),
     r AS (
       INSERT INTO runs (dag_name, dag_run_id, attempt_id, status, params, resolved_params, labels, queue, max_active_runs, inline,
                         spec, normalized, request_id, queued_at, started_at, owner, heartbeat_at, scheduler_log, started_by, profile)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
              CASE WHEN $14 THEN NULL ELSE now() END, CASE WHEN $14 THEN clock_timestamp() END, $15,
              CASE WHEN $14 THEN clock_timestamp() END, ids.id, $16, $17
         FROM ids WHERE ids.g = 1
       RETURNING ${RUN_COLUMNS}),
     a AS (INSERT INTO run_attempts (run_pk, attempt_no, attempt_id, status) SELECT pk, 1, $3, $4 FROM r),
     s AS (INSERT INTO run_steps (run_pk, attempt_no, seq, name, step_id, handler, stdout_log, stderr_log)
           SELECT r.pk, 1, u.seq, u.name, u.step_id, u.handler, o.id, e.id
             FROM r, unnest($18::int[], $19::text[], $20::text[], $21::text[]) WITH ORDINALITY u(seq, name, step_id, handler, ord)
             JOIN ids o ON o.g = 2 * u.ord JOIN ids e ON e.g = 2 * u.ord + 1
           RETURNING ${STEP_COLUMNS})${
             record === undefined
               ? ''
               : `,
     m AS (${record.sql})`
           }
     SELECT r.*, (SELECT COALESCE(json_agg(s ORDER BY s.seq), '[]'::json) FROM s) AS steps FROM r`,
    record === undefined ? values : [...values, ...record.values],
  );
  const row = inserted.rows[0];
  if (row === undefined) {
    if (options.deadline !== undefined) return undefined;
    throw new Error('INSERT INTO runs returned no row');
  }
  const parsed = parseRunRow(row);
  // Fresh step rows carry no timestamp, so their JSON form parses as a read of them would.
  const steps = InsertedStepsSchema.parse(row).steps.map(parseStepRow);
  return { pk: parsed.pk, run: parsed, steps };
}

/**
 * The run `dagName`/`dagRunId`, or `undefined`. `lock` takes a row lock
 * (inside a transaction). `dagRunId` {@link LATEST_RUN_ID} is resolved now to
 * the DAG's most recently created run (root or child; a run recorded under
 * that very id before it was reserved wins).
 */
export async function findRun(
  db: Queryable,
  dagName: string,
  dagRunId: string,
  lock = false,
): Promise<RunRecord | undefined> {
  const result = await db.query(
    dagRunId === LATEST_RUN_ID
      ? `SELECT ${RUN_COLUMNS} FROM runs WHERE dag_name = $1
           ORDER BY (dag_run_id = $2) DESC, pk DESC LIMIT 1${lock ? ' FOR UPDATE' : ''}`
      : `SELECT ${RUN_COLUMNS} FROM runs WHERE dag_name = $1 AND dag_run_id = $2${lock ? ' FOR UPDATE' : ''}`,
    [dagName, dagRunId],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : parseRunRow(row);
}

/** The bus job that created a run (idempotent `run.start`). */
export async function requestIdOf(db: Queryable, pk: number): Promise<string | undefined> {
  const result = await db.query('SELECT request_id FROM runs WHERE pk = $1', [pk]);
  return parseFirstRow(RequestRowSchema, result)?.request_id ?? undefined;
}

/** The run with primary key `pk`. */
export async function findRunByPk(db: Queryable, pk: number): Promise<RunRecord | undefined> {
  const result = await db.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE pk = $1`, [pk]);
  const row = result.rows[0];
  return row === undefined ? undefined : parseRunRow(row);
}

/** Step rows of one attempt, in `seq` order. */
export async function loadSteps(db: Queryable, runPk: number, attemptNo: number): Promise<StepRecord[]> {
  const result = await db.query(
    `SELECT ${STEP_COLUMNS} FROM run_steps WHERE run_pk = $1 AND attempt_no = $2 ORDER BY seq`,
    [runPk, attemptNo],
  );
  return result.rows.map(parseStepRow);
}

/** True when a run of `dagName` is running, queued or waiting (singleton check). */
export async function hasActiveRun(db: Queryable, dagName: string): Promise<boolean> {
  const result = await db.query(`SELECT 1 FROM runs WHERE dag_name = $1 AND status IN ${ACTIVE_RUNS_SQL} LIMIT 1`, [
    dagName,
  ]);
  return result.rows.length > 0;
}

/** Serializes run creation per DAG name until the transaction ends (singleton checks). */
export async function lockDagName(db: Queryable, dagName: string): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dagu-run:${dagName}`]);
}

/**
 * Records the end of an attempt: status, error, evaluated params (kept for
 * retries), `finished_at`. Only applies while the attempt is still current
 * and active (a run another replica force-ended keeps that end).
 *
 * @returns the finish time, or `undefined` when the attempt was no longer current or active.
 */
export async function finishAttempt(
  db: Queryable,
  run: { pk: number; attemptNo: number },
  outcome: {
    status: number;
    error?: string;
    params: string;
    resolvedParams: readonly RunParam[];
    paramsEvaluated: boolean;
  },
): Promise<Date | undefined> {
  const result = await db.query(
    `WITH upd AS (
       UPDATE runs SET status = $3, error = $4, finished_at = now(), params = $5, resolved_params = $6, params_evaluated = $7, heartbeat_at = now()
       WHERE pk = $1 AND attempt_no = $2 AND status IN ${OWNED_RUNS_SQL} RETURNING finished_at
     ), att AS (
       UPDATE run_attempts SET status = $3, finished_at = now() WHERE run_pk = $1 AND attempt_no = $2
     )
     SELECT finished_at FROM upd`,
    [
      run.pk,
      run.attemptNo,
      outcome.status,
      outcome.error ?? null,
      outcome.params,
      JSON.stringify(outcome.resolvedParams),
      outcome.paramsEvaluated,
    ],
  );
  return parseFirstRow(FinishedRowSchema, result)?.finished_at;
}

/** Queued → aborted (stop of a run that never started). @returns the run when it was still queued. */
export async function abortQueuedRun(db: Queryable, pk: number): Promise<RunRecord | undefined> {
  const result = await db.query(
    `UPDATE runs SET status = ${RunStatus.aborted}, finished_at = now(), error = 'the run was stopped before it started' WHERE pk = $1 AND status = ${RunStatus.queued} RETURNING ${RUN_COLUMNS}`,
    [pk],
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  await db.query(
    `UPDATE run_attempts SET status = ${RunStatus.aborted}, finished_at = now() WHERE run_pk = $1 AND attempt_no = (SELECT attempt_no FROM runs WHERE pk = $1)`,
    [pk],
  );
  return parseRunRow(row);
}
