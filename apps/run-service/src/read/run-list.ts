import type { RunsQuery } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { runStatusLabel } from '@dagu-mcp/contracts';
import { withStorageErrors } from '../store/storage-errors';
import { selectLatestRuns, selectRunSummaries, type RunSummaryRow } from '../store/run-list.repository';
import { decodeRunsCursor, encodeRunsCursor } from '@dagu-mcp/search';
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

function summaryOf(
  row: RunSummaryRow,
): Record<string, unknown> & { name: string; dagRunId: string; uri: string; status: number; statusLabel: string } {
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
export async function listRuns(
  pool: Pool,
  query: RunsQuery,
): Promise<{ items: Array<ReturnType<typeof summaryOf>>; nextCursor?: string }> {
  const latest = query.dagRunId === 'latest';
  const limit = latest ? 1 : (query.limit ?? DEFAULT_RUNS_LIMIT);
  const rows = await withStorageErrors(() =>
    selectRunSummaries(pool, {
      ...(query.name !== undefined ? { name: query.name } : {}),
      ...(query.dagRunId !== undefined && !latest ? { dagRunId: query.dagRunId } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.fromDate !== undefined ? { fromDate: query.fromDate } : {}),
      ...(query.toDate !== undefined ? { toDate: query.toDate } : {}),
      ...(query.labels !== undefined ? { labels: query.labels } : {}),
      ...(query.cursor !== undefined && !latest ? { beforePk: decodeRunsCursor(query.cursor, query) } : {}),
      limit: limit + 1,
    }),
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const more = rows.length > limit && !latest && last !== undefined;
  return { items: page.map(summaryOf), ...(more ? { nextCursor: encodeRunsCursor(last.pk, query) } : {}) };
}

/** The newest run of each named DAG (names without runs are absent). */
export async function latestRuns(
  pool: Pool,
  dagNames: readonly string[],
): Promise<{ latest: Record<string, { dagRunId: string; status: number; statusLabel: string }> }> {
  const latest: Record<string, { dagRunId: string; status: number; statusLabel: string }> = {};
  if (dagNames.length === 0) return { latest };
  for (const row of await withStorageErrors(() => selectLatestRuns(pool, dagNames))) {
    latest[row.dag_name] = { dagRunId: row.dag_run_id, status: row.status, statusLabel: runStatusLabel(row.status) };
  }
  return { latest };
}
