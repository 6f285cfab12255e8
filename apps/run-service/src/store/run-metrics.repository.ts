import { z } from 'zod';
import type { Queryable } from './run-rows';
import { ACTIVE_RUNS_SQL } from './status-sql';

/** Runs now active in one queue with one status, and how long the oldest has been there. */
export interface ActiveRunCount {
  readonly queue: string;
  /** A DAG-run status int: running, queued or waiting (dagu-model §1). */
  readonly status: number;
  readonly count: number;
  /** Seconds since the oldest of them was queued (or created), at the time of the query. */
  readonly oldestAgeSeconds: number;
}

const RowSchema = z.object({
  queue: z.string(),
  status: z.coerce.number(),
  count: z.coerce.number(),
  oldest_age: z.coerce.number(),
});

const ACTIVE_SQL = `
SELECT queue, status, count(*) AS count,
       extract(epoch FROM clock_timestamp() - min(coalesce(queued_at, created_at))) AS oldest_age
  FROM runs
 WHERE status IN ${ACTIVE_RUNS_SQL}
 GROUP BY queue, status`;

/**
 * Active DAG-runs of every replica by queue and status, for the run metrics read at scrape time
 * (`dagu_runs_active`, `dagu_run_queue_oldest_age_seconds`; docs/deployment.md "Metrics"). One
 * grouped query over the partial index of active runs.
 */
export async function countActiveRuns(db: Queryable): Promise<ActiveRunCount[]> {
  const result = await db.query(ACTIVE_SQL);
  return result.rows.map((row: unknown) => {
    const r = RowSchema.parse(row);
    return { queue: r.queue, status: r.status, count: r.count, oldestAgeSeconds: Math.max(0, r.oldest_age) };
  });
}
