import type { Pool } from '@dagu-mcp/runtime';

/**
 * Moves the run history of a renamed DAG (Dagu spec 022b `rename_dag`: "its
 * run history move[s] to newName"): every run of `from` created up to the
 * rename's commit time `renamedAt` takes the name `to`, in one statement.
 *
 * Safe to run twice (CONTRIBUTING §6; the outbox delivers at least once): a
 * second run finds nothing of `from` left. The time bound keeps a late
 * delivery from taking the runs of a newer DAG that reused the old name; a
 * run whose id `to` already holds (a run of an older DAG of that name) stays
 * where it is rather than break the `(dag_name, dag_run_id)` key.
 *
 * @returns how many runs moved.
 */
export async function moveRunHistory(db: Pool, from: string, to: string, renamedAt: Date): Promise<number> {
  const result = await db.query(
    `UPDATE runs r SET dag_name = $2
     WHERE r.dag_name = $1 AND r.created_at <= $3
       AND NOT EXISTS (SELECT 1 FROM runs t WHERE t.dag_name = $2 AND t.dag_run_id = r.dag_run_id)`,
    [from, to, renamedAt],
  );
  return result.rowCount ?? 0;
}
