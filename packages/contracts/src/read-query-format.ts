import { READ_QUERY_TABLE, type ParamCoercion, type QueryTarget, type ReadQueryMap } from './read-query';
import { encodeComponent } from './uri-escape';

/** One `key=value` piece per value; `labels` joins its items with a raw `,`. */
function formatParam(key: string, coercion: ParamCoercion, value: unknown): string[] {
  const text = (item: unknown): string => encodeComponent(String(item));
  if (Array.isArray(value)) {
    if (coercion === 'labels') return [`${key}=${value.map(text).join(',')}`];
    return value.map((item) => `${key}=${text(item)}`);
  }
  return [`${key}=${text(value)}`];
}

/**
 * Writes a parsed query in canonical form (spec 021 "Query handling"; order
 * is not normative, so the canonical order is the spec table's): parameters in
 * `READ_QUERY_TABLE` order, keys and values percent-encoded per RFC 3986
 * (space as `%20`, never `+`), `labels` as one comma-separated value,
 * `runs.status` as one `status=` piece per value, booleans as `true`/`false`.
 *
 * Shapes: `formatReadQuery('runs', {status: [2, 3], limit: 20})` →
 * `"status=2&status=3&limit=20"`; `formatReadQuery('dags', {})` → `""`.
 *
 * Precondition: `query` is valid for `target` (as `parseReadQuery` returns
 * it); `parseReadQuery(target, formatReadQuery(target, q), mode)` deep-equals
 * `q` for every valid non-empty `q`. Keys set to `undefined` are skipped.
 *
 * @returns The query text without `?`, or `""` when no parameter is set.
 */
export function formatReadQuery<T extends QueryTarget>(target: T, query: ReadQueryMap[T] | undefined): string {
  if (query === undefined) return '';
  const present = new Map<string, unknown>(Object.entries(query));
  const coercions: Readonly<Record<string, ParamCoercion>> = READ_QUERY_TABLE[target].params;
  const pieces: string[] = [];
  for (const [key, coercion] of Object.entries(coercions)) {
    const value = present.get(key);
    if (value !== undefined) pieces.push(...formatParam(key, coercion, value));
  }
  return pieces.join('&');
}

/**
 * Appends a query to a resource URI exactly as supplied: spec 021 returns
 * `run_logs`, `step_log` and `foreach_items` URIs "with the supplied query
 * appended", so the tool echoes the caller's (trimmed, validated) query text
 * rather than the canonical form.
 *
 * Shapes: `appendQueryText('dagu://runs/a/b/logs', 'tail=100')` →
 * `"dagu://runs/a/b/logs?tail=100"`; an `undefined` or empty query returns
 * `uri` unchanged (an empty query is absent).
 *
 * Precondition: `uri` has no query yet and `queryText` has no leading `?`
 * and has passed `parseReadQuery`.
 */
export function appendQueryText(uri: string, queryText: string | undefined): string {
  return queryText === undefined || queryText === '' ? uri : `${uri}?${queryText}`;
}
