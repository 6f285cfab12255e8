import { DaguError, formatDaguUri, isValidDagName } from '@dagu-mcp/contracts';
import { readString, rejectUnknownFields, requireObject } from '../tool-input';

const CHANGE_FIELDS: ReadonlySet<string> = new Set(['mode', 'type', 'name', 'spec']);

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
 * Parses `dagu_change` arguments per 022 §Input, filling `context` as values
 * resolve. Order: object, unknown fields, field types, mode, type, name, spec.
 *
 * @throws DaguError `invalid_tool_input` (with `field`), `unsupported_change_mode`
 *   or `unsupported_change_type`
 */
export function parseChangeInput(args: unknown, context: ChangeErrorContext): ChangeRequest {
  const input = requireObject(args);
  rejectUnknownFields(input, CHANGE_FIELDS);
  const mode = readString(input, 'mode') ?? 'preview';
  const type = readString(input, 'type') ?? 'upsert_dag';
  const name = readString(input, 'name');
  const spec = readString(input, 'spec', { keepAsIs: true });
  context.mode = mode;
  if (mode !== 'preview' && mode !== 'apply') {
    throw new DaguError('unsupported_change_mode', `Unsupported change mode: ${mode}. Use preview or apply.`, {
      field: 'mode',
    });
  }
  context.type = type;
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
  // Only a valid name is "resolved" (022 §Errors: dagName and dagUri).
  context.dagName = name;
  context.dagUri = formatDaguUri({ kind: 'dag_spec', name });
  if (spec === undefined || spec.trim() === '') {
    throw new DaguError('invalid_tool_input', 'The spec field is required.', { field: 'spec' });
  }
  return { mode, type, name, spec, dagUri: context.dagUri };
}
