import { z } from 'zod';
import { createLogStreams } from './run.repository';
import { parseFirstRow, parseRows, type Queryable } from './run-rows';

/**
 * SQL of foreach items and their body steps (store/migrations.ts
 * `004_engine_foreach`). Rows are addressed by run, attempt, the top-level
 * foreach step's name and the item path.
 */

/** Where a foreach's rows live. */
export interface ForeachAddress {
  runPk: number;
  attemptNo: number;
  /** The top-level foreach step (nested foreach items live under it too). */
  stepName: string;
}

/** A new item with its body steps. */
export interface NewItem {
  path: string;
  index: number;
  key: string;
}

/** The log streams of one body step of one item. */
export interface BodyStreams {
  stdout: number;
  stderr: number;
}

/**
 * Inserts the items (parent `parent`) and one not-started row per body step
 * of each, with fresh log streams. @returns streams by `path` then body seq.
 */
export async function insertItems(
  db: Queryable,
  at: ForeachAddress,
  parent: string,
  items: readonly NewItem[],
  body: ReadonlyArray<{ seq: number; name: string; id?: string }>,
): Promise<Map<string, BodyStreams[]>> {
  const streams = new Map<string, BodyStreams[]>();
  if (items.length === 0) return streams;
  await db.query(
    `INSERT INTO foreach_items (run_pk, attempt_no, step_name, path, parent, idx, key)
     SELECT $1, $2, $3, p, $4, i, k FROM unnest($5::text[], $6::int[], $7::text[]) AS v(p, i, k)
     ON CONFLICT DO NOTHING`,
    [
      at.runPk,
      at.attemptNo,
      at.stepName,
      parent,
      items.map((i) => i.path),
      items.map((i) => i.index),
      items.map((i) => i.key),
    ],
  );
  const ids = await createLogStreams(db, items.length * body.length * 2);
  const rows: Array<{ path: string; seq: number; name: string; id: string | null; out: number; err: number }> = [];
  let n = 0;
  for (const item of items) {
    const list: BodyStreams[] = [];
    for (const step of body) {
      const out = ids[n++] ?? 0;
      const err = ids[n++] ?? 0;
      list.push({ stdout: out, stderr: err });
      rows.push({ path: item.path, seq: step.seq, name: step.name, id: step.id ?? null, out, err });
    }
    streams.set(item.path, list);
  }
  await db.query(
    `INSERT INTO foreach_item_steps (run_pk, attempt_no, step_name, path, seq, name, step_id, stdout_log, stderr_log)
     SELECT $1, $2, $3, * FROM unnest($4::text[], $5::int[], $6::text[], $7::text[], $8::bigint[], $9::bigint[])
     ON CONFLICT DO NOTHING`,
    [
      at.runPk,
      at.attemptNo,
      at.stepName,
      rows.map((r) => r.path),
      rows.map((r) => r.seq),
      rows.map((r) => r.name),
      rows.map((r) => r.id),
      rows.map((r) => r.out),
      rows.map((r) => r.err),
    ],
  );
  return streams;
}

/** The state of an item. */
export interface ItemState {
  status: number;
  error?: string;
  startedAt?: Date;
  finishedAt?: Date;
  /** Values of the foreach's `collect` expressions (a succeeded item of a foreach with `collect`). */
  collected?: Record<string, string>;
}

/**
 * Writes the latest state of several items of one foreach step in one
 * statement (`unnest` of arrays; foreach-state-writer.ts batches them).
 */
export async function saveItems(
  db: Queryable,
  at: ForeachAddress,
  rows: ReadonlyArray<{ path: string; state: ItemState }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `UPDATE foreach_items f SET status = v.status, error = v.error, started_at = v.started_at, finished_at = v.finished_at, collected = v.collected
     FROM unnest($4::text[], $5::smallint[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::jsonb[])
       AS v(path, status, error, started_at, finished_at, collected)
     WHERE f.run_pk = $1 AND f.attempt_no = $2 AND f.step_name = $3 AND f.path = v.path`,
    [
      at.runPk,
      at.attemptNo,
      at.stepName,
      rows.map((r) => r.path),
      rows.map((r) => r.state.status),
      rows.map((r) => r.state.error ?? null),
      rows.map((r) => r.state.startedAt?.toISOString() ?? null),
      rows.map((r) => r.state.finishedAt?.toISOString() ?? null),
      rows.map((r) => (r.state.collected === undefined ? null : JSON.stringify(r.state.collected))),
    ],
  );
}

/** The state of a body step of an item. */
export interface BodyStepState extends Omit<ItemState, 'collected'> {
  exitCode?: number;
  outputs: unknown;
  foreachParent?: string;
}

/**
 * Writes the latest state of several body steps (of items of one foreach
 * step) in one statement (`unnest` of arrays).
 */
export async function saveBodySteps(
  db: Queryable,
  at: ForeachAddress,
  rows: ReadonlyArray<{ path: string; seq: number; state: BodyStepState }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `UPDATE foreach_item_steps s SET status = v.status, error = v.error, started_at = v.started_at, finished_at = v.finished_at,
       exit_code = v.exit_code, outputs = v.outputs, foreach_parent = v.foreach_parent
     FROM unnest($4::text[], $5::int[], $6::smallint[], $7::text[], $8::timestamptz[], $9::timestamptz[], $10::int[], $11::jsonb[], $12::text[])
       AS v(path, seq, status, error, started_at, finished_at, exit_code, outputs, foreach_parent)
     WHERE s.run_pk = $1 AND s.attempt_no = $2 AND s.step_name = $3 AND s.path = v.path AND s.seq = v.seq`,
    [
      at.runPk,
      at.attemptNo,
      at.stepName,
      rows.map((r) => r.path),
      rows.map((r) => r.seq),
      rows.map((r) => r.state.status),
      rows.map((r) => r.state.error ?? null),
      rows.map((r) => r.state.startedAt?.toISOString() ?? null),
      rows.map((r) => r.state.finishedAt?.toISOString() ?? null),
      rows.map((r) => r.state.exitCode ?? null),
      rows.map((r) => JSON.stringify(r.state.outputs)),
      rows.map((r) => r.state.foreachParent ?? null),
    ],
  );
}

const ItemRowSchema = z.object({
  path: z.string(),
  idx: z.number().int(),
  key: z.string(),
  status: z.number().int(),
  error: z.string().nullable(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  collected: z.record(z.string(), z.string()).nullable(),
});
/** A stored item. */
export type ItemRow = z.output<typeof ItemRowSchema>;

/** Every item of a foreach (top-level, or nested under `parent`) in index order. */
export async function listItems(db: Queryable, at: ForeachAddress, parent: string): Promise<ItemRow[]> {
  const result = await db.query(
    'SELECT path, idx, key, status, error, started_at, finished_at, collected FROM foreach_items WHERE run_pk = $1 AND attempt_no = $2 AND step_name = $3 AND parent = $4 ORDER BY idx',
    [at.runPk, at.attemptNo, at.stepName, parent],
  );
  return parseRows(ItemRowSchema, result);
}

/** One item by path. */
export async function findItem(db: Queryable, at: ForeachAddress, path: string): Promise<ItemRow | undefined> {
  const result = await db.query(
    'SELECT path, idx, key, status, error, started_at, finished_at, collected FROM foreach_items WHERE run_pk = $1 AND attempt_no = $2 AND step_name = $3 AND path = $4',
    [at.runPk, at.attemptNo, at.stepName, path],
  );
  return parseFirstRow(ItemRowSchema, result);
}

const BodyRowSchema = z.object({
  seq: z.number().int(),
  name: z.string(),
  step_id: z.string().nullable(),
  status: z.number().int(),
  error: z.string().nullable(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  foreach_parent: z.string().nullable(),
  stdout_log: z.coerce.number().int(),
  stderr_log: z.coerce.number().int(),
});
/** A stored body step. */
export type BodyRow = z.output<typeof BodyRowSchema>;

/** The body steps of an item in execution order. */
export async function listBodySteps(db: Queryable, at: ForeachAddress, path: string): Promise<BodyRow[]> {
  const result = await db.query(
    `SELECT seq, name, step_id, status, error, started_at, finished_at, foreach_parent, stdout_log, stderr_log FROM foreach_item_steps
     WHERE run_pk = $1 AND attempt_no = $2 AND step_name = $3 AND path = $4 ORDER BY seq`,
    [at.runPk, at.attemptNo, at.stepName, path],
  );
  return parseRows(BodyRowSchema, result);
}

/** The top-level foreach steps (`parent = ''`) of attempt `attemptNo` of run `runPk` that expanded items. */
export async function listExpandedForeachSteps(db: Queryable, runPk: number, attemptNo: number): Promise<Set<string>> {
  const result = await db.query(
    "SELECT DISTINCT step_name FROM foreach_items WHERE run_pk = $1 AND attempt_no = $2 AND parent = ''",
    [runPk, attemptNo],
  );
  return new Set(
    result.rows.map((row) =>
      typeof row === 'object' && row !== null && 'step_name' in row ? String(row.step_name) : '',
    ),
  );
}
