import { z } from 'zod';
import { parseFirstRow, parseRows, parseRunRow, RUN_COLUMNS, type Queryable, type RunRecord } from '../store/run-rows';

/**
 * Links between runs (db/migrations.ts `003_engine_composition`): a child
 * run's root, parent and parent step; the children of a run; a child looked
 * up under its root (`dagu://runs/{root}/{rootId}/sub/{childId}`).
 */

const RootRowSchema = z.object({ pk: z.coerce.number().int(), dag_name: z.string(), dag_run_id: z.string() });

/** The root run of run `pk` (itself when it is a root). */
export async function rootOf(db: Queryable, pk: number): Promise<{ pk: number; dagName: string; dagRunId: string }> {
  const result = await db.query(
    'SELECT r.pk, r.dag_name, r.dag_run_id FROM runs p JOIN runs r ON r.pk = COALESCE(p.root_pk, p.pk) WHERE p.pk = $1',
    [pk],
  );
  const row = parseFirstRow(RootRowSchema, result);
  if (row === undefined) throw new Error(`run ${pk} not found`);
  return { pk: row.pk, dagName: row.dag_name, dagRunId: row.dag_run_id };
}

/** Records the root, parent run and parent step of a new child run. */
export async function linkChildRun(db: Queryable, link: { pk: number; rootPk: number; parentPk: number; parentStep: string }): Promise<void> {
  await db.query('UPDATE runs SET root_pk = $2, parent_pk = $3, parent_step = $4 WHERE pk = $1', [link.pk, link.rootPk, link.parentPk, link.parentStep]);
}

const ChildRowSchema = z.object({ dag_name: z.string(), dag_run_id: z.string(), parent_step: z.string() });

/** The child runs started by run `parentPk`, oldest first. */
export async function childrenOf(db: Queryable, parentPk: number): Promise<Array<{ dagName: string; dagRunId: string; parentStep: string }>> {
  const result = await db.query('SELECT dag_name, dag_run_id, parent_step FROM runs WHERE parent_pk = $1 ORDER BY pk', [parentPk]);
  return parseRows(ChildRowSchema, result).map((row) => ({ dagName: row.dag_name, dagRunId: row.dag_run_id, parentStep: row.parent_step }));
}

/** The child run `subRunId` under the root run `rootPk`, or `undefined`. */
export async function findSubRun(db: Queryable, rootPk: number, subRunId: string): Promise<RunRecord | undefined> {
  const result = await db.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE root_pk = $1 AND dag_run_id = $2 LIMIT 1`, [rootPk, subRunId]);
  const row = result.rows[0];
  return row === undefined ? undefined : parseRunRow(row);
}

/** The parent link of a run (`undefined` for a root run). */
export async function parentOf(db: Queryable, pk: number): Promise<{ rootPk: number; parentPk: number } | undefined> {
  const result = await db.query('SELECT root_pk, parent_pk FROM runs WHERE pk = $1 AND root_pk IS NOT NULL', [pk]);
  const row = parseFirstRow(z.object({ root_pk: z.coerce.number().int(), parent_pk: z.coerce.number().int() }), result);
  return row === undefined ? undefined : { rootPk: row.root_pk, parentPk: row.parent_pk };
}
