import { ENDED_RUN_STATUSES } from '@dagu-mcp/contracts';
import { withTransaction, type Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { parseRows } from './run-rows';

/**
 * Deletes expired runs (dagu-model §3 `hist_retention_days`; used by
 * retention/retention-sweeper.ts): one batch per short transaction, rows
 * claimed `FOR UPDATE SKIP LOCKED` so readers are never blocked and
 * replicas never collide. Only root runs that ended are candidates; their
 * child runs, attempts, steps and foreach rows go with them (ON DELETE
 * CASCADE), their log streams and chunks are deleted explicitly (no
 * foreign key: chunks are written behind by the log sink).
 */

const PkSchema = z.object({ pk: z.coerce.number().int() });
const IdSchema = z.object({ id: z.coerce.number().int() });
const GoneRunSchema = z.object({ dag_name: z.string(), dag_run_id: z.string() });

/** What one batch deleted: how many root runs, and every deleted run (roots and children) by name and id. */
export interface DeletedRuns {
  count: number;
  runs: Array<{ dag_name: string; dag_run_id: string }>;
}

/**
 * Deletes at most `limit` root runs that ended more than their snapshot's
 * `histRetentionDays` (else `defaultDays`) days ago, with everything they own.
 * @param defaultDays days kept when the snapshot sets none (`RUN_HIST_RETENTION_DAYS`)
 */
export async function deleteExpiredRuns(pool: Pool, defaultDays: number, limit: number): Promise<DeletedRuns> {
  return withTransaction(pool, async (client) => {
    const doomed = parseRows(
      PkSchema,
      await client.query(
        `SELECT pk FROM runs WHERE root_pk IS NULL AND status IN (${ENDED_RUN_STATUSES.join(', ')}) AND finished_at IS NOT NULL
         AND finished_at < now() - make_interval(days => COALESCE((normalized->>'histRetentionDays')::int, $1::int))
       ORDER BY pk LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [defaultDays, limit],
      ),
    ).map((row) => row.pk);
    if (doomed.length === 0) return { count: 0, runs: [] };
    const runs = parseRows(
      GoneRunSchema,
      await client.query(
        'SELECT dag_name, dag_run_id FROM runs WHERE pk = ANY($1::bigint[]) OR root_pk = ANY($1::bigint[])',
        [doomed],
      ),
    );
    const streams = parseRows(
      IdSchema,
      await client.query(
        `WITH gone AS (SELECT pk, scheduler_log FROM runs WHERE pk = ANY($1::bigint[]) OR root_pk = ANY($1::bigint[]))
       SELECT scheduler_log AS id FROM gone
       UNION ALL SELECT unnest(ARRAY[stdout_log, stderr_log]) FROM run_steps WHERE run_pk IN (SELECT pk FROM gone)
       UNION ALL SELECT unnest(ARRAY[stdout_log, stderr_log]) FROM foreach_item_steps WHERE run_pk IN (SELECT pk FROM gone)`,
        [doomed],
      ),
    ).map((row) => row.id);
    await client.query('DELETE FROM runs WHERE root_pk = ANY($1::bigint[])', [doomed]);
    await client.query('DELETE FROM runs WHERE pk = ANY($1::bigint[])', [doomed]);
    await client.query('DELETE FROM log_chunks WHERE stream_id = ANY($1::bigint[])', [streams]);
    await client.query('DELETE FROM log_streams WHERE id = ANY($1::bigint[])', [streams]);
    return { count: doomed.length, runs };
  });
}
