import type { DagListReply, DagListRequest } from '@dagu-mcp/contracts';
import type { DagSummaryRecord } from './dag.records';
import type { DagFilters, DagRepository } from './dag.repository';
import { toDagSummary } from './dag.views';
import type { NextRunCalculator } from './next-run';

/**
 * The DAG collection (spec 021 `dags` target and its `page`, `perPage`,
 * `name`, `labels`, `sort`, `order` query parameters).
 *
 * - Defaults: page 1, perPage {@link DEFAULT_PER_PAGE}, sort `name`, order `asc`.
 * - `name` keeps DAGs whose name contains it, case-insensitively; `labels`
 *   keeps DAGs carrying every listed label (exact strings).
 * - `sort=name` orders by name in code-unit order and pages in SQL.
 * - `sort=nextRun` orders by the next scheduled start (see next-run.ts),
 *   ties by name; DAGs without one (no schedule, or suspended) come last in
 *   both orders. Next runs are not stored, so this order is computed over
 *   every DAG that passes the filters (summary columns only) and then paged.
 * - `pagination` is `{page, perPage, total, totalPages}`, `totalPages =
 *   ceil(total / perPage)` (0 when nothing matches); a page past the end is
 *   empty.
 */

/** `perPage` when the request has none (the contract allows 1..200). */
export const DEFAULT_PER_PAGE = 50;

type Order = 'asc' | 'desc';

interface Scheduled {
  record: DagSummaryRecord;
  nextRun: Date | undefined;
}

/** Code-unit order, the order of `ORDER BY name` on the `COLLATE "C"` column. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The `sort=nextRun` comparator: earliest first for `asc`, latest first for
 * `desc`, ties broken by name in the same direction; entries without a next
 * run always last, by name in the same direction.
 */
export function compareByNextRun(order: Order): (a: Scheduled, b: Scheduled) => number {
  const sign = order === 'desc' ? -1 : 1;
  return (a, b) => {
    const byName = sign * compareNames(a.record.name, b.record.name);
    if (a.nextRun === undefined || b.nextRun === undefined) {
      if (a.nextRun === undefined && b.nextRun === undefined) return byName;
      return a.nextRun === undefined ? 1 : -1;
    }
    return sign * (a.nextRun.getTime() - b.nextRun.getTime()) || byName;
  };
}

/**
 * One page of the DAG collection.
 *
 * @param now - the instant next runs are computed from; default the current time.
 * @throws DaguError `resource_unavailable` when PostgreSQL is unavailable.
 */
export async function listDags(
  repository: DagRepository,
  nextRuns: NextRunCalculator,
  request: DagListRequest,
  now: Date = new Date(),
): Promise<DagListReply> {
  const page = request.page ?? 1;
  const perPage = request.perPage ?? DEFAULT_PER_PAGE;
  const order: Order = request.order ?? 'asc';
  const filters: DagFilters = { nameContains: request.name, labels: request.labels ?? [] };
  const offset = (page - 1) * perPage;
  const schedule = (record: DagSummaryRecord): Scheduled => ({
    record,
    nextRun: record.suspended ? undefined : nextRuns.nextRunOf(record.schedule, now),
  });

  let total: number;
  let entries: Scheduled[];
  if ((request.sort ?? 'name') === 'name') {
    const [count, records] = await Promise.all([
      repository.count(filters),
      repository.listByName(filters, order, perPage, offset),
    ]);
    total = count;
    entries = records.map(schedule);
  } else {
    const all = (await repository.listAll(filters)).map(schedule).sort(compareByNextRun(order));
    total = all.length;
    entries = all.slice(offset, offset + perPage);
  }
  return {
    items: entries.map((entry) => toDagSummary(entry.record, entry.nextRun)),
    pagination: { page, perPage, total, totalPages: Math.ceil(total / perPage) },
  };
}
