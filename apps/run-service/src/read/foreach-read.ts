import { DaguError, type ForeachItemsQuery, formatDaguUri, StepStatus, stepStatusLabel } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { findSubRunOf } from '../store/run-links.repository';
import { subRunNotFound } from './sub-run-detail';
import { readStreamTotals } from '../store/log-reader';
import { runNotFound, withStorageErrors } from '../store/storage-errors';
import { findRun, loadSteps } from '../store/run.repository';
import type { Queryable, RunRecord } from '../store/run-rows';
import {
  findItem,
  listBodySteps,
  listExpandedForeachSteps,
  listItems,
  type BodyRow,
  type ForeachAddress,
  type ItemRow,
} from '../store/foreach.repository';

/**
 * Foreach reads (021 "Foreach items" / "Foreach item", dagu-model §1
 * buckets and order): `foreach_items` — counts over every item of the
 * foreach (top-level, or nested with `parent`), a status filter, pages
 * (`perPage` default 50, max 500) in failed/aborted, running, rest order,
 * each by index; `foreach_item` — one item and its body steps; and the body
 * step a foreach step log (`item` + `bodyStepName`) reads. An item of a
 * foreach with `collect` shows its collected values (`collected`, name →
 * text) once its body succeeded.
 */

/** A foreach step address (root or child run). */
export interface ForeachStepInput {
  dagName: string;
  dagRunId: string;
  subRunId?: string;
  stepName: string;
}

type Bucket = 'notStarted' | 'running' | 'succeeded' | 'failed' | 'aborted';
const LABEL_TO_BUCKET: Record<NonNullable<ForeachItemsQuery['status']>, Bucket> = {
  not_started: 'notStarted',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  aborted: 'aborted',
};

/** The dagu-model §1 bucket of an item status. */
export function bucketOf(status: number): Bucket {
  if (status === StepStatus.succeeded) return 'succeeded';
  if (status === StepStatus.failed) return 'failed';
  if (status === StepStatus.aborted) return 'aborted';
  if (status === StepStatus.running || status === StepStatus.retrying) return 'running';
  return 'notStarted';
}

function orderRank(bucket: Bucket): number {
  return bucket === 'failed' || bucket === 'aborted' ? 0 : bucket === 'running' ? 1 : 2;
}

const iso = (date: Date | null): Record<string, string> => (date === null ? {} : { at: date.toISOString() });

function itemEntry(row: ItemRow) {
  return {
    item: row.path,
    index: row.idx,
    key: row.key,
    status: row.status,
    statusLabel: stepStatusLabel(row.status),
    ...(row.error !== null ? { error: row.error } : {}),
    ...(row.started_at !== null ? { startedAt: iso(row.started_at).at } : {}),
    ...(row.finished_at !== null ? { finishedAt: iso(row.finished_at).at } : {}),
    ...(row.collected !== null ? { collected: row.collected } : {}),
  };
}

/** Resolves the run and checks the step; @returns where its foreach rows live. */
export async function foreachAddressOf(
  db: Queryable,
  input: ForeachStepInput,
): Promise<{ run: RunRecord; at: ForeachAddress }> {
  const run =
    input.subRunId !== undefined
      ? await findSubRunOf(db, input.dagName, input.dagRunId, input.subRunId)
      : await findRun(db, input.dagName, input.dagRunId);
  if (run === undefined)
    throw input.subRunId !== undefined
      ? subRunNotFound(input.dagRunId, input.subRunId)
      : runNotFound(input.dagName, input.dagRunId);
  const steps = await loadSteps(db, run.pk, run.attempt_no);
  if (!steps.some((step) => step.handler === null && step.name === input.stepName)) {
    throw new DaguError('resource_not_found', `The run ${input.dagRunId} has no step named ${input.stepName}.`, {
      field: 'stepName',
    });
  }
  return { run, at: { runPk: run.pk, attemptNo: run.attempt_no, stepName: input.stepName } };
}

/** `run.foreachItems`. */
export async function readForeachItems(pool: Pool, input: ForeachStepInput & { query?: ForeachItemsQuery }) {
  return withStorageErrors(async () => {
    const { at } = await foreachAddressOf(pool, input);
    const rows = await listItems(pool, at, input.query?.parent ?? '');
    const counts: Record<Bucket, number> = { notStarted: 0, running: 0, succeeded: 0, failed: 0, aborted: 0 };
    for (const row of rows) counts[bucketOf(row.status)]++;
    const wanted = input.query?.status === undefined ? undefined : LABEL_TO_BUCKET[input.query.status];
    const filtered = rows.filter((row) => wanted === undefined || bucketOf(row.status) === wanted);
    filtered.sort((a, b) => orderRank(bucketOf(a.status)) - orderRank(bucketOf(b.status)) || a.idx - b.idx);
    const page = input.query?.page ?? 1;
    const perPage = input.query?.perPage ?? 50;
    const items = filtered.slice((page - 1) * perPage, page * perPage).map(itemEntry);
    return {
      total: rows.length,
      counts,
      items,
      page,
      perPage,
      matched: filtered.length,
      hasMore: page * perPage < filtered.length,
    };
  });
}

/** `run.foreachItem`. */
export async function readForeachItem(pool: Pool, input: ForeachStepInput & { item: string }) {
  return withStorageErrors(async () => {
    const { at } = await foreachAddressOf(pool, input);
    const row = await findItem(pool, at, input.item);
    if (row === undefined)
      throw new DaguError('resource_not_found', `The foreach step ${input.stepName} has no item ${input.item}.`, {
        field: 'item',
      });
    const body = await listBodySteps(pool, at, input.item);
    const totals = await readStreamTotals(
      pool,
      body.flatMap((step) => [step.stdout_log, step.stderr_log]),
    );
    const steps = body.map((step) => ({
      name: step.name,
      ...(step.step_id !== null ? { id: step.step_id } : {}),
      status: step.status,
      statusLabel: stepStatusLabel(step.status),
      hasStdout: (totals.get(step.stdout_log) ?? 0) > 0,
      hasStderr: (totals.get(step.stderr_log) ?? 0) > 0,
      ...(step.error !== null ? { error: step.error } : {}),
      ...(step.started_at !== null ? { startedAt: step.started_at.toISOString() } : {}),
      ...(step.finished_at !== null ? { finishedAt: step.finished_at.toISOString() } : {}),
      ...(step.foreach_parent !== null ? { foreachParent: step.foreach_parent } : {}),
    }));
    return { ...itemEntry(row), steps };
  });
}

/** The body step `bodyStepName` (name, else id) of item `item` — what a foreach step log reads. */
export async function findBodyStep(
  db: Queryable,
  input: ForeachStepInput & { item: string; bodyStepName: string },
): Promise<BodyRow> {
  const { at } = await foreachAddressOf(db, input);
  const body = await listBodySteps(db, at, input.item);
  const step = body.find((s) => s.name === input.bodyStepName) ?? body.find((s) => s.step_id === input.bodyStepName);
  if (step === undefined) {
    throw new DaguError(
      'resource_not_found',
      `Item ${input.item} of ${input.stepName} has no body step ${input.bodyStepName}.`,
      { field: 'bodyStepName' },
    );
  }
  return step;
}

/** Adds `foreachUri` (the step's foreach-items URI) to the foreach steps of a run detail that expanded items. */
export async function withForeachUris<D extends { steps: Array<{ name: string }> }>(
  db: Queryable,
  run: RunRecord,
  detail: D,
  address: { name: string; dagRunId: string; subRunId?: string },
): Promise<D> {
  const names = await listExpandedForeachSteps(db, run.pk, run.attempt_no);
  if (names.size === 0) return detail;
  return {
    ...detail,
    steps: detail.steps.map((step) =>
      names.has(step.name)
        ? { ...step, foreachUri: formatDaguUri({ kind: 'foreach_items', ...address, stepName: step.name }) }
        : step,
    ),
  };
}
