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
 *   ties by name in the same direction; DAGs without one (no schedule, or
 *   suspended) come last in both orders, by name. Next runs are not stored:
 *   they are computed per distinct schedule of the matching DAGs (usually a
 *   few dozen, cached by the calculator), handed to SQL, which orders and
 *   pages (repository `listByNextRun`), so only one page of rows travels.
 * - `pagination` is `{page, perPage, total, totalPages}`, `totalPages =
 *   ceil(total / perPage)` (0 when nothing matches); a page past the end is
 *   empty.
 */

/** `perPage` when the request has none (the contract allows 1..200). */
export const DEFAULT_PER_PAGE = 50;

type Order = 'asc' | 'desc';

/**
 * One page ordered by next run: next runs are computed per distinct
 * schedule of the matching DAGs, then SQL orders and pages with them.
 */
async function pageByNextRun(
  repository: DagRepository,
  nextRuns: NextRunCalculator,
  filters: DagFilters,
  window: { order: Order; limit: number; offset: number; now: Date },
): Promise<DagSummaryRecord[]> {
  const schedules = await repository.distinctSchedules(filters);
  const known = schedules.flatMap((schedule) => {
    const nextRun = nextRuns.nextRunOf(schedule, window.now);
    return nextRun === undefined ? [] : [{ schedule, nextRun }];
  });
  return repository.listByNextRun(filters, known, window.order, window.limit, window.offset);
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
  const [total, records] = await Promise.all([
    repository.count(filters),
    (request.sort ?? 'name') === 'name'
      ? repository.listByName(filters, order, perPage, offset)
      : pageByNextRun(repository, nextRuns, filters, { order, limit: perPage, offset, now }),
  ]);
  return {
    items: records.map((record) =>
      toDagSummary(record, record.suspended ? undefined : nextRuns.nextRunOf(record.schedule, now)),
    ),
    pagination: { page, perPage, total, totalPages: Math.ceil(total / perPage) },
  };
}
