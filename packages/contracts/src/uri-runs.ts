import type { DaguError } from './errors';
import type { DaguResource, RunAddress, StepAddress } from './uri-resource';
import {
  invalidResourceUri,
  isValidDagName,
  isValidDagRunId,
  isValidForeachItem,
  isValidStepName,
  requireValidUriPart,
} from './uri-names';

/**
 * Path shapes of the `dagu://runs` family (spec 020 families table; spec 021
 * "Addressing modes" target derivation). Segments arrive decoded; keywords
 * (`logs`, `sub`, `steps`, `foreach`) only count at their fixed positions, so
 * a run id `logs` or a step named `foreach` is still data.
 *
 * | Segments after `runs`                                   | kind            |
 * | ------------------------------------------------------- | --------------- |
 * | (none)                                                  | `runs`          |
 * | `{name}/{dagRunId}` [`/sub/{subRunId}`]                 | `run`           |
 * | `{name}/{dagRunId}/logs` (root run only)                | `run_logs`      |
 * | {run} `/steps/{stepName}/logs`                          | `step_log`      |
 * | {run} `/steps/{stepName}/foreach`                       | `foreach_items` |
 * | {run} `/steps/{stepName}/foreach/{item}`                | `foreach_item`  |
 * | {run} `/steps/{stepName}/foreach/{item}/steps/{body}/logs` | `step_log` + `item`, `bodyStepName` |
 *
 * where {run} is `{name}/{dagRunId}` or `{name}/{dagRunId}/sub/{subRunId}`.
 */

function unsupportedRunsShape(): DaguError {
  return invalidResourceUri('Resource URI path is not a supported dagu://runs shape.', 'path');
}

/** Reads `{name}/{dagRunId}[/sub/{subRunId}]` and returns the run plus the remaining segments. */
function matchRun(segments: readonly string[]): { run: RunAddress; rest: readonly string[] } {
  const [name, dagRunId, ...rest] = segments;
  if (name === undefined || dagRunId === undefined) throw unsupportedRunsShape();
  requireValidUriPart(isValidDagName(name), 'name', 'DAG name');
  requireValidUriPart(isValidDagRunId(dagRunId), 'dagRunId', 'DAG-run id');
  if (rest[0] !== 'sub') return { run: { name, dagRunId }, rest };
  const subRunId = rest[1];
  if (subRunId === undefined) throw unsupportedRunsShape();
  requireValidUriPart(isValidDagRunId(subRunId), 'subRunId', 'child DAG-run id');
  return { run: { name, dagRunId, subRunId }, rest: rest.slice(2) };
}

/** Reads the segments after `/steps/{stepName}`: `logs`, or the foreach shapes. */
function matchStep(step: StepAddress, rest: readonly string[]): DaguResource {
  const [keyword, item, steps, bodyStepName, logs, ...extra] = rest;
  if (keyword === 'logs' && item === undefined) return { kind: 'step_log', ...step };
  if (keyword !== 'foreach') throw unsupportedRunsShape();
  if (item === undefined) return { kind: 'foreach_items', ...step };
  requireValidUriPart(isValidForeachItem(item), 'item', 'foreach item');
  if (steps === undefined) return { kind: 'foreach_item', ...step, item };
  if (steps !== 'steps' || bodyStepName === undefined || logs !== 'logs' || extra.length > 0) {
    throw unsupportedRunsShape();
  }
  requireValidUriPart(isValidStepName(bodyStepName), 'bodyStepName', 'foreach body step name');
  return { kind: 'step_log', ...step, item, bodyStepName };
}

/**
 * Resolves the decoded path segments of a `dagu://runs` URI (without the
 * query) to its resource; `[]` is the run collection.
 *
 * @throws DaguError `invalid_resource_uri` (field `uri`) for a shape outside
 *   the table above — including child-run logs `…/sub/{id}/logs`, which
 *   spec 020 does not define — or an invalid DAG name, DAG-run id, step name
 *   or foreach item (`details.part` names it).
 */
export function matchRunsPath(segments: readonly string[]): DaguResource {
  if (segments.length === 0) return { kind: 'runs' };
  const { run, rest } = matchRun(segments);
  if (rest.length === 0) return { kind: 'run', ...run };
  if (rest.length === 1 && rest[0] === 'logs' && run.subRunId === undefined) {
    return { kind: 'run_logs', name: run.name, dagRunId: run.dagRunId };
  }
  const [steps, stepName, ...stepRest] = rest;
  if (steps !== 'steps' || stepName === undefined) throw unsupportedRunsShape();
  requireValidUriPart(isValidStepName(stepName), 'stepName', 'step name');
  return matchStep({ ...run, stepName }, stepRest);
}
