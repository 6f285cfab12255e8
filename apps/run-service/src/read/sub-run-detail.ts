import { DaguError, formatDaguUri, type RunDetail } from '@dagu-mcp/contracts';
import { runDetailOf } from './run-detail';
import { z } from 'zod';
import { findRun, findRunByPk, loadSteps } from '../store/run.repository';
import { parseFirstRow, parseRows, parseRunRow, RUN_COLUMNS, type Queryable, type RunRecord } from '../store/run-rows';

/**
 * Reads of composed runs (dagu-model §5, 021 run detail with `subRunId`):
 * a parent step lists its children as `subRuns [{dagRunId, uri, dagName}]`
 * (URIs under the root run); a child run is read under its root as
 * `dagu://runs/{root}/{rootId}/sub/{childId}` with child-addressed step log
 * URIs, `rootRun {name, dagRunId, uri}` and `parentRun {name, dagRunId}`.
 */

/** The child run `subRunId` under root run `dagName`/`dagRunId`, or `undefined`. */
export async function findSubRunOf(db: Queryable, dagName: string, dagRunId: string, subRunId: string): Promise<RunRecord | undefined> {
  const root = await findRun(db, dagName, dagRunId);
  return root === undefined ? undefined : findSubRun(db, root.pk, subRunId);
}

/** `resource_not_found` for a missing child run. */
export function subRunNotFound(dagRunId: string, subRunId: string): DaguError {
  return new DaguError('resource_not_found', `The run ${dagRunId} has no child run ${subRunId}.`, { field: 'subRunId' });
}

/** Adds `subRuns` to the parent steps of `detail` (one query; none when the run started no child). */
export async function withSubRuns(db: Queryable, run: RunRecord, detail: RunDetail): Promise<RunDetail> {
  const children = await childrenOf(db, run.pk);
  if (children.length === 0) return detail;
  const root = await rootOf(db, run.pk);
  const byStep = new Map<string, Array<{ dagRunId: string; uri: string; dagName: string }>>();
  for (const child of children) {
    const list = byStep.get(child.parentStep) ?? [];
    list.push({ dagRunId: child.dagRunId, uri: formatDaguUri({ kind: 'run', name: root.dagName, dagRunId: root.dagRunId, subRunId: child.dagRunId }), dagName: child.dagName });
    byStep.set(child.parentStep, list);
  }
  return { ...detail, steps: detail.steps.map((step) => (byStep.has(step.name) ? { ...step, subRuns: byStep.get(step.name) } : step)) };
}

/** The detail of child run `subRunId` under root `dagName`/`dagRunId`, addressed under the root. */
export async function subRunDetail(db: Queryable, input: { dagName: string; dagRunId: string; subRunId: string }): Promise<{ run: RunRecord; detail: RunDetail }> {
  const root = await findRun(db, input.dagName, input.dagRunId);
  const child = root === undefined ? undefined : await findSubRun(db, root.pk, input.subRunId);
  if (root === undefined || child === undefined) throw subRunNotFound(input.dagRunId, input.subRunId);
  const base = runDetailOf(child, await loadSteps(db, child.pk, child.attempt_no));
  const address = { name: root.dag_name, dagRunId: root.dag_run_id, subRunId: child.dag_run_id };
  const link = await parentOf(db, child.pk);
  const parent = link === undefined ? undefined : await findRunByPk(db, link.parentPk);
  const { logsUri: _logsUri, ...rest } = base;
  const detail: RunDetail = {
    ...rest,
    uri: formatDaguUri({ kind: 'run', ...address }),
    rootRun: { name: root.dag_name, dagRunId: root.dag_run_id, uri: formatDaguUri({ kind: 'run', name: root.dag_name, dagRunId: root.dag_run_id }) },
    ...(parent !== undefined ? { parentRun: { name: parent.dag_name, dagRunId: parent.dag_run_id } } : {}),
    steps: base.steps.map((step) => ({ ...step, logUri: formatDaguUri({ kind: 'step_log', ...address, stepName: step.name }) })),
  };
  return { run: child, detail };
}

/*
 * Links between runs (db/migrations.ts `003_engine_composition`): a child
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
