import { DaguError, formatDaguUri, type RunDetail } from '@dagu-mcp/contracts';
import { runDetailOf } from './run-detail-model';
import { findRun, findRunByPk, loadSteps } from '../store/run.repository';
import { childrenOf, findSubRun, parentOf, rootOf } from '../store/run-links.repository';
import type { Queryable, RunRecord } from '../store/run-rows';

/**
 * Reads of composed runs (dagu-model §5, 021 run detail with `subRunId`):
 * a parent step lists its children as `subRuns [{dagRunId, uri, dagName}]`
 * (URIs under the root run); a child run is read under its root as
 * `dagu://runs/{root}/{rootId}/sub/{childId}` with child-addressed step log
 * URIs, `rootRun {name, dagRunId, uri}` and `parentRun {name, dagRunId}`.
 */

/** `resource_not_found` for a missing child run. */
export function subRunNotFound(dagRunId: string, subRunId: string): DaguError {
  return new DaguError('resource_not_found', `The run ${dagRunId} has no child run ${subRunId}.`, {
    field: 'subRunId',
  });
}

/** Adds `subRuns` to the parent steps of `detail` (one query; none when the run started no child). */
export async function withSubRuns(db: Queryable, run: RunRecord, detail: RunDetail): Promise<RunDetail> {
  const children = await childrenOf(db, run.pk);
  if (children.length === 0) return detail;
  const root = await rootOf(db, run.pk);
  const byStep = new Map<string, Array<{ dagRunId: string; uri: string; dagName: string }>>();
  for (const child of children) {
    const list = byStep.get(child.parentStep) ?? [];
    list.push({
      dagRunId: child.dagRunId,
      uri: formatDaguUri({ kind: 'run', name: root.dagName, dagRunId: root.dagRunId, subRunId: child.dagRunId }),
      dagName: child.dagName,
    });
    byStep.set(child.parentStep, list);
  }
  return {
    ...detail,
    steps: detail.steps.map((step) => (byStep.has(step.name) ? { ...step, subRuns: byStep.get(step.name) } : step)),
  };
}

/** The detail of child run `subRunId` under root `dagName`/`dagRunId`, addressed under the root. */
export async function subRunDetail(
  db: Queryable,
  input: { dagName: string; dagRunId: string; subRunId: string },
): Promise<{ run: RunRecord; detail: RunDetail }> {
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
    rootRun: {
      name: root.dag_name,
      dagRunId: root.dag_run_id,
      uri: formatDaguUri({ kind: 'run', name: root.dag_name, dagRunId: root.dag_run_id }),
    },
    ...(parent !== undefined ? { parentRun: { name: parent.dag_name, dagRunId: parent.dag_run_id } } : {}),
    steps: base.steps.map((step) => ({
      ...step,
      logUri: formatDaguUri({ kind: 'step_log', ...address, stepName: step.name }),
    })),
  };
  return { run: child, detail };
}
