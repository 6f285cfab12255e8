import { DaguError, isValidDagName, type DagValidation } from '@dagu-mcp/contracts';
import { locateErrors, parseDagSpec, type NormalizedDag } from '@dagu-mcp/dag-spec';
import type { DagWrite } from './dag.records';

/**
 * Validation of a DAG change (spec 022 `upsert_dag`): the DAG YAML rules of
 * dagu-model §3–4 via `@dagu-mcp/dag-spec`, and the columns a valid DAG is
 * stored with.
 */

/** The label that names a DAG's workspace (dagu-model §10): `workspace=<name>`. */
const WORKSPACE_LABEL_PREFIX = 'workspace=';

/** The outcome of {@link validateDagChange}: the 022 fields, and what to store when valid. */
export interface DagChangeCheck {
  /** `{valid, errors, errorLocations?, warnings?, dag?}` as the `dag.validate` reply (spec 022; `warnings` only when valid, `errorLocations` only when not). */
  validation: DagValidation;
  /** Present exactly when `validation.valid`. */
  write: DagWrite | undefined;
}

/**
 * Refuses a DAG name that breaks dagu-model §2 (the gateway checks first;
 * the service checks again because it owns the data).
 *
 * @throws DaguError `invalid_tool_input` on field `name`.
 */
export function assertValidDagName(name: string): void {
  if (!isValidDagName(name)) {
    throw new DaguError(
      'invalid_tool_input',
      `The DAG name "${name}" is not valid: use letters, digits, "_", "." and "-", at most 40 characters, not "." or "..".`,
      { field: 'name' },
    );
  }
}

/**
 * The workspace a DAG belongs to: the value of its first `workspace=<name>`
 * label with a non-empty value (dagu-model §10).
 *
 * @returns the trimmed workspace name, or `undefined` when there is none.
 */
export function workspaceOfLabels(labels: readonly string[]): string | undefined {
  for (const label of labels) {
    if (!label.startsWith(WORKSPACE_LABEL_PREFIX)) continue;
    const value = label.slice(WORKSPACE_LABEL_PREFIX.length).trim();
    if (value !== '') return value;
  }
  return undefined;
}

/** The normalized model as the JSON object the contracts carry (`NormalizedDagJsonSchema`). */
export function toDagJson(dag: NormalizedDag): Record<string, unknown> {
  return { ...dag };
}

/**
 * Validates `spec` as the DAG `name` (spec 022 "Change Type"). Never writes
 * and never throws on a bad spec: validation failures are data
 * (`valid: false`, `errors`), not errors.
 *
 * @param name - the DAG name, which wins over a `name` inside the YAML.
 * @param spec - the YAML exactly as given; kept byte for byte in `write.spec`.
 * @throws DaguError `invalid_tool_input` on field `name` for a name that breaks dagu-model §2.
 */
export function validateDagChange(name: string, spec: string): DagChangeCheck {
  assertValidDagName(name);
  const result = parseDagSpec(spec, { name });
  if (!result.valid || result.dag === undefined) {
    const errorLocations = locateErrors(spec, result.errors);
    return { validation: { valid: false, errors: result.errors, errorLocations }, write: undefined };
  }
  const dag = result.dag;
  const normalized = toDagJson(dag);
  return {
    validation: { valid: true, errors: [], warnings: result.warnings, dag: normalized },
    write: {
      name,
      spec,
      normalized,
      labels: dag.labels,
      workspace: workspaceOfLabels(dag.labels),
      schedule: dag.schedule,
      description: dag.description,
    },
  };
}
