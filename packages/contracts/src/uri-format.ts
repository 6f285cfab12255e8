import { formatReadQuery } from './read-query-format';
import { encodePathSegment } from './uri-escape';
import type { DaguResource, RunAddress, StepAddress } from './uri-resource';

/** Joins decoded values as `/`-separated, percent-encoded path segments. */
function segments(...values: readonly string[]): string {
  return values.map((value) => `/${encodePathSegment(value)}`).join('');
}

/** `dagu://runs/{name}/{dagRunId}` or its `/sub/{subRunId}` child. */
function runBase(run: RunAddress): string {
  const child = run.subRunId === undefined ? '' : segments('sub', run.subRunId);
  return `dagu://runs${segments(run.name, run.dagRunId)}${child}`;
}

/** `{run}/steps/{stepName}`. */
function stepBase(step: StepAddress): string {
  return `${runBase(step)}${segments('steps', step.stepName)}`;
}

/** `base?query` when the query has any parameter, else `base`. */
function withQuery(base: string, query: string): string {
  return query === '' ? base : `${base}?${query}`;
}

/**
 * Writes a resource as its canonical `dagu://` URI (spec 020 "Resource URI
 * Model"; spec 021 "URI path segments in returned URIs follow Spec 020
 * escaping"; dagu-model §2 wiki paths).
 *
 * Every path value is one segment, percent-encoded as UTF-8 with every octet
 * outside RFC 3986 `unreserved` escaped (`/` in a step name or wiki path
 * becomes `%2F`, `é` becomes `%C3%A9`, a value `..` becomes `%2E%2E`). The
 * query, when present and non-empty, is written by `formatReadQuery` in
 * canonical order; to echo a caller's own query text use `appendQueryText` on
 * the URI of the resource without `query`.
 *
 * Shapes: `{kind: 'wiki_page', workspace: 'ops', path: 'guides/intro'}` →
 * `dagu://wiki/ops/guides%2Fintro`; `{kind: 'run_logs', name: 'n', dagRunId: 'r',
 * query: {tail: 100}}` → `dagu://runs/n/r/logs?tail=100`.
 *
 * Precondition: the resource is valid (names pass the `uri-names` validators).
 * Then `parseDaguUri(formatDaguUri(r))` deep-equals `r`, given `r` has no keys
 * set to `undefined` and no empty `query` object. Does not validate; throws
 * only `URIError` for a lone UTF-16 surrogate, which no validator accepts.
 */
export function formatDaguUri(resource: DaguResource): string {
  switch (resource.kind) {
    case 'references':
      return 'dagu://reference';
    case 'reference':
      return `dagu://reference${segments(resource.topic)}`;
    case 'dags':
      return withQuery('dagu://dags', formatReadQuery('dags', resource.query));
    case 'dag_spec':
      return `dagu://dags${segments(resource.name, 'spec')}`;
    case 'runs':
      return withQuery('dagu://runs', formatReadQuery('runs', resource.query));
    case 'run':
      return runBase(resource);
    case 'run_logs':
      return withQuery(
        `${runBase({ name: resource.name, dagRunId: resource.dagRunId })}/logs`,
        formatReadQuery('run_logs', resource.query),
      );
    case 'step_log': {
      const body =
        resource.item === undefined ? '' : segments('foreach', resource.item, 'steps', resource.bodyStepName);
      return withQuery(`${stepBase(resource)}${body}/logs`, formatReadQuery('step_log', resource.query));
    }
    case 'foreach_items':
      return withQuery(`${stepBase(resource)}/foreach`, formatReadQuery('foreach_items', resource.query));
    case 'foreach_item':
      return `${stepBase(resource)}${segments('foreach', resource.item)}`;
    case 'wiki': {
      const base = resource.workspace === undefined ? 'dagu://wiki' : `dagu://wiki${segments(resource.workspace)}`;
      return withQuery(base, formatReadQuery('wiki', resource.query));
    }
    case 'wiki_page':
      return `dagu://wiki${segments(resource.workspace, resource.path)}`;
  }
}
