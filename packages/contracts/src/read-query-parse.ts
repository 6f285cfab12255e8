import { DaguError } from './errors';
import { isQueryTarget, READ_QUERY_TABLE, type ParamCoercion, type QueryTarget, type ReadQueryMap } from './read-query';
import { decodeQueryComponent } from './uri-escape';
import { isMissingFieldIssue } from './zod-issues';

/**
 * Where a query came from, which decides the error it fails with (spec 021
 * "Query handling"): the `query` field of a target-mode call
 * (`invalid_tool_input`, field `query`) or the query part of a `dagu://` URI
 * (`invalid_resource_uri`, field `uri`).
 */
export type ReadQueryMode = 'target' | 'uri';

/** The error for a bad query in `mode`; `details.parameter` names the parameter when one is to blame. */
export function readQueryError(mode: ReadQueryMode, message: string, parameter?: string): DaguError {
  const details = parameter === undefined ? {} : { details: { parameter } };
  return mode === 'target'
    ? new DaguError('invalid_tool_input', message, { field: 'query', ...details })
    : new DaguError('invalid_resource_uri', message, { field: 'uri', ...details });
}

/**
 * Splits a query string (no leading `?`) into decoded `[key, value]` pairs, in
 * order, using `application/x-www-form-urlencoded` rules (`+` is a space).
 * Decisions, all failing with {@link readQueryError}: an empty piece (`a=1&&b=2`,
 * a trailing `&`) is malformed; a piece without `=` has an empty value; an
 * empty key or an empty value is refused; a raw character outside the RFC 3986
 * query set or a bad `%` escape is malformed encoding.
 */
export function splitReadQuery(query: string, mode: ReadQueryMode): Array<[string, string]> {
  return query.split('&').map((piece): [string, string] => {
    if (piece === '') throw readQueryError(mode, 'Query string has an empty parameter (a stray "&").');
    const eq = piece.indexOf('=');
    const key = decodeQueryComponent(eq === -1 ? piece : piece.slice(0, eq));
    const value = decodeQueryComponent(eq === -1 ? '' : piece.slice(eq + 1));
    if (key === undefined) throw readQueryError(mode, 'Query string has a malformed parameter name encoding.');
    if (value === undefined) {
      throw readQueryError(mode, `Query parameter "${key}" has malformed URL encoding.`, key);
    }
    if (key === '') throw readQueryError(mode, 'Query string has a parameter without a name.');
    if (value === '') throw readQueryError(mode, `Query parameter "${key}" must not be empty.`, key);
    return [key, value];
  });
}

/** A decimal integer string as a number; any other text is passed on for the schema to refuse. */
function toInt(text: string): number | string {
  const value = Number(text);
  return /^[0-9]+$/.test(text) && Number.isSafeInteger(value) ? value : text;
}

/** Turns a parameter's values into the typed candidate the target's schema validates. */
function coerce(coercion: ParamCoercion, values: readonly string[]): unknown {
  const first = values[0] ?? '';
  switch (coercion) {
    case 'text':
      return first;
    case 'int':
      return toInt(first);
    case 'repeated-int':
      return values.map(toInt);
    case 'bool':
      return first === 'true' ? true : first === 'false' ? false : first;
    case 'labels': {
      const parts = first.split(',').map((part) => part.trim());
      return parts.every((part) => part.length > 0) ? parts : first;
    }
  }
}

/**
 * Parses the query of a `dagu_read` target or `dagu://` URI against the spec
 * 021 table (`READ_QUERY_TABLE`).
 *
 * @param target A query target: `dags`, `runs`, `wiki`, `run_logs`, `step_log`, `foreach_items`.
 * @param query The query text without `?` (in URI mode: everything after the first `?`).
 *   Not trimmed here; the tool layer trims the field first.
 * @param mode `target` for the tool's `query` field, `uri` for a URI's query part.
 * @returns The typed query, e.g. `{tail: 100}` for `step_log`, `{status: [2, 3], limit: 20}`
 *   for `runs`, or `undefined` when `query` is empty (an empty query is absent).
 * @throws DaguError `invalid_tool_input` (field `query`) in target mode, or
 *   `invalid_resource_uri` (field `uri`) in URI mode, when: the target takes no
 *   query; target-mode text starts with `?`; the encoding is malformed; a
 *   parameter is unknown, empty or repeated without being repeatable (only
 *   `runs.status` is); a value breaks its contract; or the `step_log` rules
 *   on `tail`/`head`/`offset`/`limit` are broken. `details.parameter` names the
 *   parameter when one is to blame.
 */
export function parseReadQuery<T extends QueryTarget>(
  target: T,
  query: string,
  mode: ReadQueryMode,
): ReadQueryMap[T] | undefined {
  if (!isQueryTarget(target)) throw readQueryError(mode, `Target ${String(target)} does not accept a query.`);
  if (mode === 'target' && query.startsWith('?')) {
    throw readQueryError(mode, 'The query field must not start with "?".');
  }
  if (query === '') return undefined;
  const entry = READ_QUERY_TABLE[target];
  const coercions: Readonly<Record<string, ParamCoercion>> = entry.params;
  const grouped = new Map<string, string[]>();
  for (const [key, value] of splitReadQuery(query, mode)) {
    const coercion = Object.hasOwn(coercions, key) ? coercions[key] : undefined;
    if (coercion === undefined) {
      throw readQueryError(mode, `Query parameter "${key}" is not supported for ${target}.`, key);
    }
    const values = grouped.get(key) ?? [];
    if (values.length > 0 && coercion !== 'repeated-int') {
      throw readQueryError(mode, `Query parameter "${key}" must not be repeated.`, key);
    }
    grouped.set(key, [...values, value]);
  }
  const candidate: Record<string, unknown> = {};
  for (const [key, values] of grouped) candidate[key] = coerce(coercions[key] ?? 'text', values);
  const parsed = entry.schema.safeParse(candidate);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const parameter = issue?.path[0];
  if (typeof parameter === 'string') {
    if (issue !== undefined && isMissingFieldIssue(issue, candidate))
      throw readQueryError(mode, `Query parameter "${parameter}" is required.`, parameter);
    throw readQueryError(mode, `Query parameter "${parameter}" must be ${issue?.message ?? 'valid'}.`, parameter);
  }
  throw readQueryError(mode, issue?.message ?? `Query is not valid for ${target}.`);
}
