import {
  DaguError,
  appendQueryText,
  formatDaguUri,
  isQueryTarget,
  isValidDagName,
  isValidDagRunId,
  isValidForeachItem,
  isValidReferenceTopic,
  isValidStepName,
  isValidWikiPath,
  isValidWikiPathPrefix,
  isValidWikiWorkspace,
  parseDaguUri,
  parseReadQuery,
  type DaguResource,
} from '@dagu-mcp/contracts';
import { readInteger, readString, rejectUnknownFields, requireObject } from '../tool-input';
import { buildResource } from './read-resource';
import {
  DAG_NAMED_TARGETS,
  READ_FIELDS,
  READ_TARGET_ALIASES,
  TARGET_MODE_FIELDS,
  TARGET_RULES,
  isReadTarget,
  type ReadFields,
  type ReadTarget,
} from './read-targets';

export type { ReadFields } from './read-targets';

/**
 * A validated `dagu_read` request, the same shape for both addressing modes.
 * - `resource`: the `dagu://` resource read, when the target has one.
 * - `uri`: the URI the result returns (021 §Target contracts), when it has one.
 * - `fields`: effective values (in URI mode, derived from the URI).
 * - `queryText`: the supplied query text, echoed in `uri`.
 */
export interface ReadRequest {
  readonly mode: 'target' | 'uri';
  readonly target: ReadTarget;
  readonly fields: ReadFields;
  readonly resource: DaguResource | undefined;
  readonly uri: string | undefined;
  /** The parsed query (`parseReadQuery`'s result for the target), when one was given. */
  readonly query: unknown;
}

/** Fields attached to a read error before the target is known (`target`, `uri`). */
export interface ReadErrorContext {
  target?: string;
  uri?: string;
}

/**
 * Parses `dagu_read` arguments per 021 §Input and §Addressing modes.
 *
 * @param context filled with `target` / `uri` as soon as they are resolved, so
 *   the caller can attach them to the error object (021 §Errors)
 * @throws DaguError `invalid_tool_input` (with `field`), `unsupported_read_target`,
 *   `invalid_resource_uri` or `unsupported_resource`
 */
export function parseReadInput(args: unknown, context: ReadErrorContext): ReadRequest {
  const input = requireObject(args);
  noteSuppliedTarget(input, context);
  rejectUnknownFields(input, READ_FIELDS);
  const fields: ReadFields = {};
  for (const field of TARGET_MODE_FIELDS) {
    if (field === 'limit') {
      const limit = readInteger(input, 'limit');
      if (limit !== undefined) fields.limit = limit;
    } else {
      const value = readString(input, field, { keepAsIs: field === 'password' });
      if (value !== undefined) fields[field] = value;
    }
  }
  const uri = readString(input, 'uri');
  if (uri !== undefined) {
    context.uri = uri;
    const mixed = TARGET_MODE_FIELDS.filter((f) => fields[f] !== undefined);
    const first = mixed[0];
    if (first !== undefined) throw mixedAddressingError(mixed, first);
    return fromUri(uri, context);
  }
  if (fields.target === undefined) {
    // dagu-model §10: a target supplied empty or all whitespace is a fault of that field, not a missing mode.
    if (typeof input.target === 'string') {
      throw new DaguError('invalid_tool_input', 'The target field must not be empty or all whitespace.', {
        field: 'target',
      });
    }
    throw new DaguError('invalid_tool_input', 'Provide either target (target mode) or uri (URI mode).');
  }
  return fromTarget(fields, context);
}

/**
 * Mixed addressing (dagu-model §10): `field` names the offending target-mode
 * field (`target` whenever `target` meets `uri`, else the first in field
 * order), and `details.fields` every field in conflict, `uri` last.
 */
function mixedAddressingError(mixed: readonly string[], first: string): DaguError {
  const field = mixed.includes('target') ? 'target' : first;
  return new DaguError('invalid_tool_input', 'URI mode (uri) cannot be combined with target-mode fields.', {
    field,
    details: { fields: [...mixed, 'uri'] },
  });
}

/**
 * Puts a supported `target` (aliases resolved) into the error context before
 * any other check, so early failures (unknown fields, wrong types) still name
 * it (021 §Errors: `target` when a valid target has been resolved).
 */
function noteSuppliedTarget(input: Record<string, unknown>, context: ReadErrorContext): void {
  if (typeof input.target !== 'string' || (input.uri !== undefined && input.uri !== null)) return;
  const supplied = input.target.trim();
  const resolved = READ_TARGET_ALIASES[supplied] ?? supplied;
  if (isReadTarget(resolved)) context.target = resolved;
}

/**
 * URI mode: the returned URI is the validated resource with its path in
 * canonical form (021: "URI path segments in returned URIs follow Spec 020
 * escaping") and the query text as supplied, so `DAGU://dags?` comes back as
 * `dagu://dags` and `dagu://dags/a%2Db/spec` as `dagu://dags/a-b/spec`.
 */
function fromUri(uri: string, context: ReadErrorContext): ReadRequest {
  const resource = parseDaguUri(uri);
  context.target = resource.kind;
  // Path in canonical form; the query text as supplied (021: parameter order is not normative).
  const { query: _parsed, ...path } = { query: undefined, ...resource };
  const q = uri.indexOf('?');
  const canonical = appendQueryText(formatDaguUri(path), q < 0 ? undefined : uri.slice(q + 1));
  context.uri = canonical;
  const query = 'query' in resource ? resource.query : undefined;
  return { mode: 'uri', target: resource.kind, fields: fieldsOf(resource), resource, uri: canonical, query };
}

function fromTarget(fields: ReadFields, context: ReadErrorContext): ReadRequest {
  const supplied = fields.target ?? '';
  context.target = supplied;
  const target = READ_TARGET_ALIASES[supplied] ?? supplied;
  if (!isReadTarget(target)) {
    throw new DaguError('unsupported_read_target', `Unsupported read target: ${supplied}.`, {
      field: 'target',
    });
  }
  context.target = target;
  const rule = TARGET_RULES[target];
  for (const field of TARGET_MODE_FIELDS) {
    if (field === 'target' || fields[field] === undefined) continue;
    if (!rule.required.includes(field) && !rule.optional.includes(field)) {
      throw new DaguError('invalid_tool_input', `The ${field} field is not allowed for target ${target}.`, { field });
    }
  }
  for (const field of rule.required) {
    if (fields[field] === undefined) {
      throw new DaguError('invalid_tool_input', `The ${field} field is required for target ${target}.`, { field });
    }
  }
  if (target === 'reference' && fields.name === undefined) fields.name = 'authoring';
  if (fields.query?.startsWith('?')) {
    // Checked before the URI is built, so the error never carries a `…??…` URI.
    throw new DaguError('invalid_tool_input', 'The query field must not start with "?".', { field: 'query' });
  }
  checkPairs(target, fields);
  checkValues(target, fields);
  const resource = buildResource(target, fields);
  // dags, runs and references have no URI in target mode (021 §Target contracts).
  const uri =
    resource === undefined || NO_TARGET_MODE_URI.has(target)
      ? undefined
      : appendQueryText(formatDaguUri(resource), fields.query);
  // Resolved before the query is checked, so a query error still names the URI.
  if (uri !== undefined) context.uri = uri;
  const query =
    fields.query === undefined || !isQueryTarget(target) ? undefined : parseReadQuery(target, fields.query, 'target');
  return { mode: 'target', target, fields, resource, uri, query };
}

/** `item` and `bodyStepName` come together on `step_log` (021 §Input). */
function checkPairs(target: ReadTarget, fields: ReadFields): void {
  if (target !== 'step_log') return;
  if (fields.item !== undefined && fields.bodyStepName === undefined) {
    throw new DaguError(
      'invalid_tool_input',
      'The bodyStepName field is required when item is supplied for target step_log.',
      { field: 'bodyStepName' },
    );
  }
  if (fields.bodyStepName !== undefined && fields.item === undefined) {
    throw new DaguError(
      'invalid_tool_input',
      'The item field is required when bodyStepName is supplied for target step_log.',
      { field: 'item' },
    );
  }
}

function checkValues(target: ReadTarget, f: ReadFields): void {
  const bad = (field: string, what: string): never => {
    throw new DaguError('invalid_tool_input', `The ${field} field is not a valid ${what}.`, { field });
  };
  if (f.name !== undefined && DAG_NAMED_TARGETS.has(target) && !isValidDagName(f.name)) bad('name', 'DAG name');
  if (f.name !== undefined && target === 'reference' && !isValidReferenceTopic(f.name)) bad('name', 'reference topic');
  if (f.dagRunId !== undefined && !isValidDagRunId(f.dagRunId)) bad('dagRunId', 'DAG-run id');
  if (f.subRunId !== undefined && !isValidDagRunId(f.subRunId)) bad('subRunId', 'DAG-run id');
  if (f.stepName !== undefined && !isValidStepName(f.stepName)) bad('stepName', 'step name');
  if (f.bodyStepName !== undefined && !isValidStepName(f.bodyStepName)) bad('bodyStepName', 'step name');
  if (f.item !== undefined && !isValidForeachItem(f.item)) bad('item', 'foreach item');
  // A workbook path is a file path, checked where the role is known (workbook-read-backend.ts).
  if (f.path !== undefined && target !== 'workbook' && !isValidWikiPath(f.path)) bad('path', 'wiki page path');
  if (f.prefix !== undefined && !isValidWikiPathPrefix(f.prefix)) bad('prefix', 'wiki page path prefix');
  if (f.workspace !== undefined) {
    if (target === 'wiki_page' && f.workspace === 'all') {
      throw new DaguError(
        'invalid_tool_input',
        'The workspace field must name one workspace for target wiki_page; "all" is not allowed.',
        { field: 'workspace' },
      );
    }
    if (f.workspace !== 'all' && !isValidWikiWorkspace(f.workspace)) bad('workspace', 'workspace');
  }
  if (f.limit !== undefined && (f.limit < 1 || f.limit > 50)) {
    throw new DaguError('invalid_tool_input', 'The limit field must be an integer from 1 through 50.', {
      field: 'limit',
    });
  }
}

const RESOURCE_STRING_KEYS = [
  'name',
  'dagRunId',
  'subRunId',
  'stepName',
  'item',
  'bodyStepName',
  'workspace',
  'path',
] as const;
const NO_TARGET_MODE_URI: ReadonlySet<ReadTarget> = new Set<ReadTarget>(['dags', 'runs', 'references']);

/** The target-mode view of a URI-mode resource (for echoes and the backends). */
function fieldsOf(resource: DaguResource): ReadFields {
  const record: Record<string, unknown> = { ...resource };
  const fields: ReadFields = {};
  for (const key of RESOURCE_STRING_KEYS) {
    const value = record[key];
    if (typeof value === 'string') fields[key] = value;
  }
  if (resource.kind === 'reference') fields.name = resource.topic;
  return fields;
}
