import type { RunsQuery } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { runStatusLabel } from '../core/status-rules';
import { withStorageErrors } from '../store/pg-errors';
import { parseRows } from '../store/run-rows';
import { decodeRunsCursor, encodeRunsCursor } from './run-list-cursor';
import { formatUri } from '../core/run-id';

/**
 * `run.list` (021 `runs` query) and `run.latest` (021 `dag.latestRun`).
 *
 * `runs`: newest first (creation order). Filters: `name` — exact DAG name;
 * `dagRunId` — exact id, or `latest` for only the newest run that matches
 * the other filters; `status` — any of the given run statuses; `fromDate` /
 * `toDate` — Unix seconds, inclusive, compared with the run's start time (its
 * creation time while it has not started); `labels` — the run has every
 * label. `limit` 1–500, default {@link DEFAULT_RUNS_LIMIT}; `nextCursor` when
 * another page exists.
 */

/** Runs per page without `limit`. */
export const DEFAULT_RUNS_LIMIT = 100;

const LatestRowSchema = z.object({ dag_name: z.string(), dag_run_id: z.string(), status: z.number().int() });

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

function summaryOf(row: z.output<typeof SummaryRowSchema>): Record<string, unknown> & { name: string; dagRunId: string; uri: string; status: number; statusLabel: string } {
  return {
    name: row.dag_name,
    dagRunId: row.dag_run_id,
    uri: formatUri.run(row.dag_name, row.dag_run_id),
    attemptId: row.attempt_id,
    status: row.status,
    statusLabel: runStatusLabel(row.status),
    labels: row.labels,
    ...(row.queued_at !== null ? { queuedAt: row.queued_at.toISOString() } : {}),
    ...(row.started_at !== null ? { startedAt: row.started_at.toISOString() } : {}),
    ...(row.finished_at !== null ? { finishedAt: row.finished_at.toISOString() } : {}),
  };
}

/** One page of run summaries. @throws DaguError `invalid_tool_input` on a foreign cursor. */
export async function listRuns(pool: Pool, query: RunsQuery): Promise<{ items: Array<ReturnType<typeof summaryOf>>; nextCursor?: string }> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: (placeholder: string) => string, value: unknown): void => {
    values.push(value);
    where.push(clause(`$${values.length}`));
  };
  const latest = query.dagRunId === 'latest';
  // Child runs (dag.run) are addressed under their root run, not listed.
  where.push('root_pk IS NULL');
  if (query.name !== undefined) add((p) => `dag_name = ${p}`, query.name);
  if (query.dagRunId !== undefined && !latest) add((p) => `dag_run_id = ${p}`, query.dagRunId);
  if (query.status !== undefined) add((p) => `status = ANY(${p}::smallint[])`, query.status);
  if (query.fromDate !== undefined) add((p) => `coalesce(started_at, created_at) >= to_timestamp(${p})`, query.fromDate);
  if (query.toDate !== undefined) add((p) => `coalesce(started_at, created_at) <= to_timestamp(${p})`, query.toDate);
  if (query.labels !== undefined) add((p) => `labels @> ${p}::text[]`, query.labels);
  if (query.cursor !== undefined && !latest) add((p) => `pk < ${p}`, decodeRunsCursor(query.cursor, query));
  const limit = latest ? 1 : (query.limit ?? DEFAULT_RUNS_LIMIT);
  values.push(limit + 1);
  const sql =
    'SELECT pk, dag_name, dag_run_id, attempt_id, status, labels, queued_at, started_at, finished_at FROM runs' +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY pk DESC LIMIT $${values.length}`;
  const result = await withStorageErrors(() => pool.query(sql, values));
  const rows = parseRows(SummaryRowSchema, result);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const more = rows.length > limit && !latest && last !== undefined;
  return { items: page.map(summaryOf), ...(more ? { nextCursor: encodeRunsCursor(last.pk, query) } : {}) };
}

/** The newest run of each named DAG (names without runs are absent). */
export async function latestRuns(pool: Pool, dagNames: readonly string[]): Promise<{ latest: Record<string, { dagRunId: string; status: number; statusLabel: string }> }> {
  const latest: Record<string, { dagRunId: string; status: number; statusLabel: string }> = {};
  if (dagNames.length === 0) return { latest };
  const result = await withStorageErrors(() =>
    pool.query('SELECT DISTINCT ON (dag_name) dag_name, dag_run_id, status FROM runs WHERE dag_name = ANY($1::text[]) AND root_pk IS NULL ORDER BY dag_name, pk DESC', [
      dagNames,
    ]),
  );
  for (const row of parseRows(LatestRowSchema, result)) {
    latest[row.dag_name] = { dagRunId: row.dag_run_id, status: row.status, statusLabel: runStatusLabel(row.status) };
  }
  return { latest };
}
