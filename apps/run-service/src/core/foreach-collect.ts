import { StepStatus, stepStatusLabel } from '@dagu-mcp/contracts';
import { interpolate, unresolvedReferences, type InterpolationScope } from './interpolate';

/**
 * Foreach `collect` and the foreach step's aggregate (dagu-model §3
 * `foreach`; the shapes Dagu users know):
 *
 * - after an item's body succeeded, every `collect` expression is
 *   interpolated in that item's scope — `${foreach.<as>}`, `${foreach.index}`,
 *   `${foreach.key}`, the body steps' `${steps.<id>.outputs.<name>}`,
 *   `${steps.<id>.exit_code}`, `${steps.<id>.stdout}` / `.stderr` (trimmed
 *   text, captured only for the steps a collect expression names), output
 *   variables, params; a `${steps.…}` / `${foreach.…}` / `${params.…}` /
 *   `${context.…}` reference that does not resolve fails the item
 *   (`collect <name>: unresolved ${…}`);
 * - the foreach step writes one JSON line to its stdout (so `output: NAME`
 *   captures it, as for `dag.run`): `{summary: {total, succeeded, failed},
 *   items: [{index, key, status, outputs | error}], outputs: [collect maps of
 *   the succeeded items]}`, items by index; and, on success, publishes each
 *   collect name as `${steps.<foreach id>.outputs.<name>}` = the JSON array
 *   of that name's values over the succeeded items, by index.
 */

const STREAM_REF = /\$\{steps\.([A-Za-z0-9_]+)\.(?:stdout|stderr)\}/g;

/** The step ids / names whose stdout or stderr a collect map reads (`${steps.<id>.stdout}`). */
export function capturedStepsOf(collect: Readonly<Record<string, string>> | undefined): Set<string> {
  const ids = new Set<string>();
  for (const expression of Object.values(collect ?? {})) {
    for (const match of expression.matchAll(STREAM_REF)) if (match[1] !== undefined) ids.add(match[1]);
  }
  return ids;
}

/** Evaluates the collect map of a succeeded item, or the error that fails the item. */
export function evaluateCollect(
  collect: Readonly<Record<string, string>>,
  scope: InterpolationScope,
): { ok: true; values: Record<string, string> } | { ok: false; error: string } {
  const values: Record<string, string> = {};
  for (const [name, expression] of Object.entries(collect)) {
    const missing = unresolvedReferences(expression, scope);
    if (missing.length > 0) return { ok: false, error: `collect ${name}: unresolved ${missing.join(', ')}` };
    values[name] = interpolate(expression, scope, 'plain');
  }
  return { ok: true, values };
}

/** How one item ended, for the aggregate. */
export interface ItemResult {
  index: number;
  key: string;
  /** Item status (dagu-model §1 step statuses: 4, 2, 3). */
  status: number;
  error?: string;
  collected?: Record<string, string>;
}

/**
 * The aggregate of a foreach step: its stdout line and, per collect name, the
 * JSON array of the succeeded items' values (the step's outputs).
 */
export function aggregateOf(
  results: readonly ItemResult[],
  collectNames: readonly string[],
): { line: string; outputs: Record<string, string> } {
  const ordered = [...results].sort((a, b) => a.index - b.index);
  const succeeded = ordered.filter((item) => item.status === StepStatus.succeeded);
  const items = ordered.map((item) => ({
    index: item.index,
    key: item.key,
    status: stepStatusLabel(item.status),
    ...(item.status === StepStatus.succeeded ? { outputs: item.collected ?? {} } : {}),
    ...(item.error !== undefined ? { error: item.error } : {}),
  }));
  const line = JSON.stringify({
    summary: { total: ordered.length, succeeded: succeeded.length, failed: ordered.length - succeeded.length },
    items,
    outputs: succeeded.map((item) => item.collected ?? {}),
  });
  const outputs: Record<string, string> = {};
  for (const name of collectNames)
    outputs[name] = JSON.stringify(succeeded.map((item) => item.collected?.[name] ?? ''));
  return { line, outputs };
}
