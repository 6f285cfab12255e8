import { z } from 'zod';
import type { OpHandler } from '@dagu-mcp/bus';
import type { DagOps, DagSchedulesReply } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { withStorageErrors } from '../db/storage-errors';

const ScheduleRowSchema = z.object({
  name: z.string(),
  schedule: z.array(z.string()),
  suspended: z.boolean(),
  version: z.number().int(),
  spec: z.string().nullable(),
});

/**
 * `dag.schedules` — what run-service's scheduler needs (dagu-model §3
 * `schedule`): every DAG with at least one schedule expression, suspended
 * ones included and flagged, by name; only `names` when given; with
 * `withSpec` the stored YAML too (the scheduler re-reads a DAG this way right
 * before it starts a scheduled run, so updates, deletions and suspension
 * count up to that moment).
 *
 * One query on the `dags` table; a DAG without a schedule is absent.
 *
 * @throws DaguError `resource_unavailable` when PostgreSQL is down.
 */
export function createDagSchedulesHandler(pool: Pool): OpHandler<DagOps, 'dag.schedules'> {
  return async function listSchedules(payload): Promise<DagSchedulesReply> {
    const spec = payload.withSpec === true ? 'spec' : 'NULL::text AS spec';
    const byName = payload.names === undefined ? '' : 'AND name = ANY($1::text[])';
    const sql = `SELECT name, schedule, suspended, version, ${spec} FROM dags WHERE cardinality(schedule) > 0 ${byName} ORDER BY name`;
    const result = await withStorageErrors(() => pool.query(sql, payload.names === undefined ? [] : [payload.names]));
    const rows = result.rows.map((row: unknown) => ScheduleRowSchema.parse(row));
    return {
      schedules: rows.map((row) => ({
        name: row.name,
        schedule: row.schedule,
        suspended: row.suspended,
        version: row.version,
        ...(row.spec !== null ? { spec: row.spec } : {}),
      })),
    };
  };
}
