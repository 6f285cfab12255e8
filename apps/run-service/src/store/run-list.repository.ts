import type { Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { parseRows } from './run-rows';

/**
 * The SQL behind `run.list` and `run.latest` (read/run-list.ts): root runs
 * only — child runs (`dag.run`) are addressed under their root, never listed.
 * Keyset pagination on `pk` (newest first); the opaque cursor itself is
 * encoded and checked above, by `@dagu-mcp/search` (runs-cursor.ts).
 */

const SummaryRowSchema = z.object({
  pk: z.coerce.number().int(),
  dag_name: z.string(),
  dag_run_id: z.string(),
  attempt_id: z.string(),
  status: z.number().int(),
  labels: z.array(z.string()),
  queued_at: z.date().nullable(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
});
/** One row of a run list page. */
export type RunSummaryRow = z.output<typeof SummaryRowSchema>;

/** Filters of {@link selectRunSummaries}; every given one must hold. */
export interface RunSummaryFilter {
  /** Exact DAG name. */
  name?: string;
  /** Exact run id. */
  dagRunId?: string;
  /** Any of these run statuses. */
  status?: readonly number[];
  /** Unix seconds, inclusive, on the start time (creation time while not started). */
  fromDate?: number;
  toDate?: number;
  /** The run has every one of these labels. */
  labels?: readonly string[];
  /** Keyset: only runs with a smaller pk (older). */
  beforePk?: number;
  /** Rows returned at most (callers ask for one more to learn whether a next page exists). */
  limit: number;
}

/** Root runs matching `filter`, newest first (pk order). */
export async function selectRunSummaries(pool: Pool, filter: RunSummaryFilter): Promise<RunSummaryRow[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: (placeholder: string) => string, value: unknown): void => {
    values.push(value);
    where.push(clause(`$${values.length}`));
  };
  where.push('root_pk IS NULL');
  if (filter.name !== undefined) add((p) => `dag_name = ${p}`, filter.name);
  if (filter.dagRunId !== undefined) add((p) => `dag_run_id = ${p}`, filter.dagRunId);
  if (filter.status !== undefined) add((p) => `status = ANY(${p}::smallint[])`, filter.status);
  if (filter.fromDate !== undefined)
    add((p) => `coalesce(started_at, created_at) >= to_timestamp(${p})`, filter.fromDate);
  if (filter.toDate !== undefined) add((p) => `coalesce(started_at, created_at) <= to_timestamp(${p})`, filter.toDate);
  if (filter.labels !== undefined) add((p) => `labels @> ${p}::text[]`, filter.labels);
  if (filter.beforePk !== undefined) add((p) => `pk < ${p}`, filter.beforePk);
  values.push(filter.limit);
  const sql =
    'SELECT pk, dag_name, dag_run_id, attempt_id, status, labels, queued_at, started_at, finished_at FROM runs' +
    ` WHERE ${where.join(' AND ')}` +
    ` ORDER BY pk DESC LIMIT $${values.length}`;
  return parseRows(SummaryRowSchema, await pool.query(sql, values));
}

const LatestRowSchema = z.object({ dag_name: z.string(), dag_run_id: z.string(), status: z.number().int() });

/** The newest root run of each of `dagNames` (`DISTINCT ON`); names without runs have no row. */
export async function selectLatestRuns(
  pool: Pool,
  dagNames: readonly string[],
): Promise<Array<z.output<typeof LatestRowSchema>>> {
  const result = await pool.query(
    'SELECT DISTINCT ON (dag_name) dag_name, dag_run_id, status FROM runs WHERE dag_name = ANY($1::text[]) AND root_pk IS NULL ORDER BY dag_name, pk DESC',
    [dagNames],
  );
  return parseRows(LatestRowSchema, result);
}
