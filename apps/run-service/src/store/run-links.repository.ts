import { RunStatus } from '@dagu-mcp/contracts';
import { ACTIVE_RUNS_SQL } from './status-sql';
import { z } from 'zod';
import { findRun } from './run.repository';
import { parseFirstRow, parseRows, parseRunRow, RUN_COLUMNS, type Queryable, type RunRecord } from './run-rows';

const ParentRowSchema = z.object({ root_pk: z.coerce.number().int(), parent_pk: z.coerce.number().int() });

/*
 * Links between runs (store/migrations.ts `003_engine_composition`): a child
 * run's root, parent and parent step; the children of a run; a child looked
 * up under its root.
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
export async function linkChildRun(
  db: Queryable,
  link: { pk: number; rootPk: number; parentPk: number; parentStep: string },
): Promise<void> {
  await db.query('UPDATE runs SET root_pk = $2, parent_pk = $3, parent_step = $4 WHERE pk = $1', [
    link.pk,
    link.rootPk,
    link.parentPk,
    link.parentStep,
  ]);
}

const ChildRowSchema = z.object({ dag_name: z.string(), dag_run_id: z.string(), parent_step: z.string() });

/** The child runs started by run `parentPk`, oldest first. */
export async function childrenOf(
  db: Queryable,
  parentPk: number,
): Promise<Array<{ dagName: string; dagRunId: string; parentStep: string }>> {
  const result = await db.query('SELECT dag_name, dag_run_id, parent_step FROM runs WHERE parent_pk = $1 ORDER BY pk', [
    parentPk,
  ]);
  return parseRows(ChildRowSchema, result).map((row) => ({
    dagName: row.dag_name,
    dagRunId: row.dag_run_id,
    parentStep: row.parent_step,
  }));
}

/** The child run `subRunId` under the root run `rootPk`, or `undefined`. */
export async function findSubRun(db: Queryable, rootPk: number, subRunId: string): Promise<RunRecord | undefined> {
  const result = await db.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE root_pk = $1 AND dag_run_id = $2 LIMIT 1`, [
    rootPk,
    subRunId,
  ]);
  const row = result.rows[0];
  return row === undefined ? undefined : parseRunRow(row);
}

/** The parent link of a run (`undefined` for a root run). */
export async function parentOf(db: Queryable, pk: number): Promise<{ rootPk: number; parentPk: number } | undefined> {
  const result = await db.query('SELECT root_pk, parent_pk FROM runs WHERE pk = $1 AND root_pk IS NOT NULL', [pk]);
  const row = parseFirstRow(ParentRowSchema, result);
  return row === undefined ? undefined : { rootPk: row.root_pk, parentPk: row.parent_pk };
}

/** The child run `subRunId` under root run `dagName`/`dagRunId`, or `undefined`. */
export async function findSubRunOf(
  db: Queryable,
  dagName: string,
  dagRunId: string,
  subRunId: string,
): Promise<RunRecord | undefined> {
  const root = await findRun(db, dagName, dagRunId);
  return root === undefined ? undefined : findSubRun(db, root.pk, subRunId);
}

/** A child run that is still active, with the params it was started with. */
export interface OpenChildRow {
  pk: number;
  dagName: string;
  dagRunId: string;
  params: string;
}

const OpenChildRowSchema = z.object({
  pk: z.coerce.number().int(),
  dag_name: z.string(),
  dag_run_id: z.string(),
  params: z.string(),
});

/** The newest active (running, queued, waiting) child run that step `parentStep` of run `parentPk` started, if any. */
export async function findOpenChild(
  db: Queryable,
  parentPk: number,
  parentStep: string,
): Promise<OpenChildRow | undefined> {
  const result = await db.query(
    `SELECT pk, dag_name, dag_run_id, params FROM runs WHERE parent_pk = $1 AND parent_step = $2
       AND status IN ${ACTIVE_RUNS_SQL} ORDER BY pk DESC LIMIT 1`,
    [parentPk, parentStep],
  );
  const row = parseFirstRow(OpenChildRowSchema, result);
  return row === undefined
    ? undefined
    : { pk: row.pk, dagName: row.dag_name, dagRunId: row.dag_run_id, params: row.params };
}

const ChangedRowSchema = z.object({
  dag_name: z.string(),
  dag_run_id: z.string(),
  attempt_id: z.string(),
  parent_pk: z.coerce.number().int().nullable(),
  parent_attempt_no: z.number().int().nullable(),
});

/**
 * Flips a parent run between running and waiting (composition/parent-waiting.ts)
 * when `parent` is its current attempt and its status is the other one.
 * @returns the run (with its own parent link) when it changed.
 */
export async function setParentStatus(
  db: Queryable,
  parent: { pk: number; attemptNo: number },
  status: typeof RunStatus.running | typeof RunStatus.waiting,
) {
  const from = status === RunStatus.waiting ? RunStatus.running : RunStatus.waiting;
  const result = await db.query(
    `WITH upd AS (
       UPDATE runs SET status = $3 WHERE pk = $1 AND attempt_no = $2 AND status = $4 RETURNING dag_name, dag_run_id, attempt_id, parent_pk
     )
     SELECT upd.*, g.attempt_no AS parent_attempt_no FROM upd LEFT JOIN runs g ON g.pk = upd.parent_pk`,
    [parent.pk, parent.attemptNo, status, from],
  );
  return parseFirstRow(ChangedRowSchema, result);
}

const RootNameRowSchema = z.object({ dag_name: z.string(), dag_run_id: z.string() });

/** The root run (name, id) of the child run `name`/`dagRunId`; `undefined` for a root run or an unknown run. */
export async function findRootByName(
  db: Queryable,
  name: string,
  dagRunId: string,
): Promise<{ name: string; dagRunId: string } | undefined> {
  const rows = parseRows(
    RootNameRowSchema,
    await db.query(
      'SELECT r.dag_name, r.dag_run_id FROM runs c JOIN runs r ON r.pk = c.root_pk WHERE c.dag_name = $1 AND c.dag_run_id = $2',
      [name, dagRunId],
    ),
  );
  const row = rows[0];
  return row === undefined ? undefined : { name: row.dag_name, dagRunId: row.dag_run_id };
}
