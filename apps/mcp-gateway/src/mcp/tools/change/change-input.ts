import {
  DaguError,
  formatDaguUri,
  isValidDagName,
  isValidWikiPath,
  isValidWikiWorkspace,
  WIKI_PATH_MAX_LENGTH,
} from '@dagu-mcp/contracts';
import { readString, rejectUnknownFields, requireObject, type ToolArgs } from '../tool-input';
import { CHANGE_TYPES, FIELDS_OF_TYPE, PROFILE_NAME, type ChangeField, type ChangeType } from './change-types';

export { CHANGE_TYPES, type ChangeType } from './change-types';

/** Every field `dagu_change` accepts (Dagu spec 022b §Input), in input-schema order. */
export const CHANGE_INPUT_FIELDS = [
  'mode',
  'type',
  'name',
  'spec',
  'newName',
  'profile',
  'workspace',
  'path',
  'content',
  'newPath',
] as const;
const CHANGE_FIELDS: ReadonlySet<string> = new Set(CHANGE_INPUT_FIELDS);

/** A validated `dagu_change` request (022 §Input, 022b §Input). Fields the type does not use are absent. */
export interface ChangeRequest {
  readonly mode: 'preview' | 'apply';
  readonly type: ChangeType;
  /** DAG types: the DAG name and its `dagu://dags/{name}/spec`. */
  readonly name?: string;
  readonly dagUri?: string;
  /** `upsert_dag`: the YAML exactly as supplied (never trimmed). */
  readonly spec?: string;
  /** `rename_dag`: the new name and its URI. */
  readonly newName?: string;
  readonly newDagUri?: string;
  /** `set_dag_profile`: the runtime profile's name. */
  readonly profile?: string;
  /** Wiki types: the page and its `dagu://wiki/{workspace}/{path}`. */
  readonly workspace?: string;
  readonly path?: string;
  readonly pageUri?: string;
  /** `upsert_wiki_page`: the Markdown exactly as supplied. */
  readonly content?: string;
  /** `rename_wiki_page`: the new path and its URI. */
  readonly newPath?: string;
  readonly newPageUri?: string;
}

/** What is resolved so far, attached to an error object (022 §Errors optional fields, 022b §Profiles: wire details). */
export interface ChangeErrorContext {
  mode?: string;
  type?: string;
  dagName?: string;
  dagUri?: string;
  workspace?: string;
  path?: string;
  pageUri?: string;
}

const invalid = (field: string, message: string): DaguError => new DaguError('invalid_tool_input', message, { field });

/**
 * Parses `dagu_change` arguments per 022 §Input and 022b §Input. Which error
 * wins follows one order: object, unknown fields, field types, mode, type,
 * then the type's rules — a field the type does not list (input-schema
 * order), then its required fields in table order, each with its own
 * syntax rule. `context` is filled first, before any check (dagu-model §10):
 * `mode` and `type` as supplied (their defaults when absent), `dagName`/
 * `dagUri` for a valid DAG name, `workspace`/`path`/`pageUri` for a valid page.
 *
 * @throws DaguError `invalid_tool_input` (with `field`), `unsupported_change_mode`
 *   or `unsupported_change_type`
 */
export function parseChangeInput(args: unknown, context: ChangeErrorContext): ChangeRequest {
  const input = requireObject(args);
  noteSupplied(input, context);
  rejectUnknownFields(input, CHANGE_FIELDS);
  const values = new Map<ChangeField, string | undefined>();
  for (const field of CHANGE_INPUT_FIELDS) {
    const asIs = field === 'spec' || field === 'content';
    values.set(field, readString(input, field, asIs ? { keepAsIs: true } : {}));
  }
  const mode = values.get('mode') ?? 'preview';
  const type = values.get('type') ?? 'upsert_dag';
  if (mode !== 'preview' && mode !== 'apply') {
    throw new DaguError('unsupported_change_mode', `Unsupported change mode: ${mode}. Use preview or apply.`, {
      field: 'mode',
    });
  }
  if (!isChangeType(type)) {
    throw new DaguError(
      'unsupported_change_type',
      `Unsupported change type: ${type}. Use one of ${CHANGE_TYPES.join(', ')}.`,
      { field: 'type' },
    );
  }
  const allowed = FIELDS_OF_TYPE[type];
  for (const field of CHANGE_INPUT_FIELDS) {
    if (field === 'mode' || field === 'type' || allowed.includes(field)) continue;
    if (values.get(field) !== undefined) throw invalid(field, `The ${field} field is not used by type ${type}.`);
  }
  const fields = new Map<ChangeField, string>();
  for (const field of allowed) {
    const value = values.get(field);
    if (value === undefined) throw invalid(field, `The ${field} field is required for type ${type}.`);
    checkSyntax(field, value);
    fields.set(field, value);
  }
  if (type === 'rename_dag' && fields.get('newName') === fields.get('name'))
    throw invalid('newName', 'The newName field must differ from name.');
  if (type === 'rename_wiki_page' && fields.get('newPath') === fields.get('path'))
    throw invalid('newPath', 'The newPath field must differ from path.');
  return buildRequest(mode, type, fields);
}

function isChangeType(type: string): type is ChangeType {
  return (CHANGE_TYPES as readonly string[]).includes(type);
}

/** The per-field syntax rules (dagu-model §2, §7; 022b profile names). */
function checkSyntax(field: ChangeField, value: string): void {
  switch (field) {
    case 'name':
    case 'newName':
      if (!isValidDagName(value))
        throw invalid(
          field,
          `The ${field} field must be 1-40 characters of letters, digits, "_", "." or "-", and not "." or "..".`,
        );
      return;
    case 'spec':
    case 'content':
      // Kept as given; all whitespace is as good as absent (022 §Input for spec).
      if (value.trim() === '') throw invalid(field, `The ${field} field is required.`);
      return;
    case 'workspace':
      if (value === 'all' || !isValidWikiWorkspace(value))
        throw invalid(field, 'The workspace field must name one workspace: letters, digits, "_", "." or "-".');
      return;
    case 'path':
    case 'newPath':
      if (value.length > WIKI_PATH_MAX_LENGTH || !isValidWikiPath(value))
        throw invalid(field, `The ${field} field must be a wiki page path: segments of A-Z a-z 0-9 . _ - joined by /.`);
      return;
    case 'profile':
      if (!PROFILE_NAME.test(value) || value.length > 40)
        throw invalid(field, 'The profile field must match ^[a-z0-9][a-z0-9._-]*$, at most 40 characters.');
      return;
    default:
      return;
  }
}

/** The request with the URIs of the names and paths it carries (dagu-model §4 forms); absent fields stay absent. */
function buildRequest(mode: 'preview' | 'apply', type: ChangeType, f: Map<ChangeField, string>): ChangeRequest {
  const name = f.get('name');
  const newName = f.get('newName');
  const workspace = f.get('workspace');
  const path = f.get('path');
  const newPath = f.get('newPath');
  const spec = f.get('spec');
  const profile = f.get('profile');
  const content = f.get('content');
  return {
    mode,
    type,
    ...(name !== undefined ? { name, dagUri: formatDaguUri({ kind: 'dag_spec', name }) } : {}),
    ...(newName !== undefined ? { newName, newDagUri: formatDaguUri({ kind: 'dag_spec', name: newName }) } : {}),
    ...(spec !== undefined ? { spec } : {}),
    ...(profile !== undefined ? { profile } : {}),
    ...(workspace !== undefined && path !== undefined
      ? { workspace, path, pageUri: formatDaguUri({ kind: 'wiki_page', workspace, path }) }
      : {}),
    ...(workspace !== undefined && newPath !== undefined
      ? { newPath, newPageUri: formatDaguUri({ kind: 'wiki_page', workspace, path: newPath }) }
      : {}),
    ...(content !== undefined ? { content } : {}),
  };
}

/** The value of a string field as the parser will read it (trimmed; empty = absent); undefined for other types. */
function suppliedString(input: ToolArgs, field: string): string | undefined {
  const value = input[field];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * The echo of an error (dagu-model §10, 022 §Errors optional fields, 022b
 * "Wiki-type errors echo workspace, path and pageUri"), read leniently
 * before the checks: a field of the wrong type is left out (its own error
 * names it), an absent or null `mode`/`type` echoes its default, and only a
 * valid DAG name or page is "resolved".
 */
function noteSupplied(input: ToolArgs, context: ChangeErrorContext): void {
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
  const workspace = suppliedString(input, 'workspace');
  if (workspace === undefined || workspace === 'all' || !isValidWikiWorkspace(workspace)) return;
  context.workspace = workspace;
  const path = suppliedString(input, 'path');
  if (path === undefined || path.length > WIKI_PATH_MAX_LENGTH || !isValidWikiPath(path)) return;
  context.path = path;
  context.pageUri = formatDaguUri({ kind: 'wiki_page', workspace, path });
}
