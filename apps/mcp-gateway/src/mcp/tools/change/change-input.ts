import { DaguError, formatDaguUri, isValidDagName } from '@dagu-mcp/contracts';
import { readString, rejectUnknownFields, requireObject } from '../tool-input';

/** Every field `dagu_change` accepts (022 §Input). */
export const CHANGE_INPUT_FIELDS = ['mode', 'type', 'name', 'spec'] as const;
const CHANGE_FIELDS: ReadonlySet<string> = new Set(CHANGE_INPUT_FIELDS);

/** A validated `dagu_change` request (022 §Input). */
export interface ChangeRequest {
  readonly mode: 'preview' | 'apply';
  readonly type: 'upsert_dag';
  readonly name: string;
  /** The YAML exactly as supplied (never trimmed). */
  readonly spec: string;
  readonly dagUri: string;
}

/** What is resolved so far, attached to an error object (022 §Errors optional fields). */
export interface ChangeErrorContext {
  mode?: string;
  type?: string;
  dagName?: string;
  dagUri?: string;
}

/**
 * Parses `dagu_change` arguments per 022 §Input. Which error wins follows
 * one order: object, unknown fields, field types, mode, type, name, spec.
 * `context` is filled first, before any check (dagu-model §10): `mode` and
 * `type` as supplied (their defaults when absent), `dagName` and `dagUri`
 * when `name` is a valid DAG name — so every error, `unsupported_change_mode`
 * and `unsupported_change_type` included, echoes them.
 *
 * @throws DaguError `invalid_tool_input` (with `field`), `unsupported_change_mode`
 *   or `unsupported_change_type`
 */
export function parseChangeInput(args: unknown, context: ChangeErrorContext): ChangeRequest {
  const input = requireObject(args);
  noteSupplied(input, context);
  rejectUnknownFields(input, CHANGE_FIELDS);
  const mode = readString(input, 'mode') ?? 'preview';
  const type = readString(input, 'type') ?? 'upsert_dag';
  const name = readString(input, 'name');
  const spec = readString(input, 'spec', { keepAsIs: true });
  if (mode !== 'preview' && mode !== 'apply') {
    throw new DaguError('unsupported_change_mode', `Unsupported change mode: ${mode}. Use preview or apply.`, {
      field: 'mode',
    });
  }
  if (type !== 'upsert_dag') {
    throw new DaguError('unsupported_change_type', `Unsupported change type: ${type}. The only type is upsert_dag.`, {
      field: 'type',
    });
  }
  if (name === undefined) throw new DaguError('invalid_tool_input', 'The name field is required.', { field: 'name' });
  if (!isValidDagName(name)) {
    throw new DaguError(
      'invalid_tool_input',
      'The name field must be 1-40 characters of letters, digits, "_", "." or "-", and not "." or "..".',
      { field: 'name' },
    );
  }
  if (spec === undefined || spec.trim() === '') {
    throw new DaguError('invalid_tool_input', 'The spec field is required.', { field: 'spec' });
  }
  return { mode, type, name, spec, dagUri: formatDaguUri({ kind: 'dag_spec', name }) };
}

/** The value of a string field as the parser will read it (trimmed; empty = absent); undefined for other types. */
function suppliedString(input: Record<string, unknown>, field: string): string | undefined {
  const value = input[field];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * The echo of an error (dagu-model §10, 022 §Errors optional fields), read
 * leniently before the checks: a field of the wrong type is left out (its
 * own error names it), an absent or null `mode`/`type` echoes its default,
 * and only a valid DAG name is "resolved" (`dagName`, `dagUri`).
 */
function noteSupplied(input: Record<string, unknown>, context: ChangeErrorContext): void {
  const absent = (field: string): boolean => input[field] === undefined || input[field] === null;
  const mode = suppliedString(input, 'mode') ?? (absent('mode') ? 'preview' : undefined);
  const type = suppliedString(input, 'type') ?? (absent('type') ? 'upsert_dag' : undefined);
  if (mode !== undefined) context.mode = mode;
  if (type !== undefined) context.type = type;
  const name = suppliedString(input, 'name');
  if (name !== undefined && isValidDagName(name)) {
    context.dagName = name;
    context.dagUri = formatDaguUri({ kind: 'dag_spec', name });
  }
}
