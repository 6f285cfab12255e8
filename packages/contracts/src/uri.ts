import { DaguError } from './errors';
import { parseReadQuery, splitReadQuery } from './read-query-parse';
import { decodePathSegment, isRegName } from './uri-escape';
import { DaguUriHostSchema, type DaguResource, type DaguUriHost } from './uri-resource';
import { matchRunsPath } from './uri-runs';
import {
  invalidResourceUri,
  isValidDagName,
  isValidReferenceTopic,
  isValidWikiPath,
  isValidWikiWorkspace,
  requireValidUriPart,
} from './uri-names';

/** A generic RFC 3986 scheme prefix, so a wrong scheme is told apart from no scheme. */
const SCHEME_PREFIX = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/** Checks the authority: a bare family name, no userinfo, no port. */
function checkHost(host: string): void {
  if (host === '') throw invalidResourceUri('Resource URI must name a resource family: dagu://<family>.', 'host');
  if (host.includes('@')) throw invalidResourceUri('Resource URI must not carry userinfo.', 'host');
  if (host.includes(':')) throw invalidResourceUri('Resource URI must not carry a port.', 'host');
  if (!isRegName(host)) throw invalidResourceUri('Resource URI has a malformed host.', 'host');
}

/** Splits the path (`""` or `/…`) into decoded segments; empty, dot and badly escaped segments fail. */
function splitPath(path: string): string[] {
  if (path === '') return [];
  return path
    .slice(1)
    .split('/')
    .map((raw) => {
      if (raw === '') {
        throw invalidResourceUri('Resource URI has an empty path segment (a doubled or trailing "/").', 'path');
      }
      if (raw === '.' || raw === '..') {
        throw invalidResourceUri('Resource URI must not contain "." or ".." segments.', 'path');
      }
      const segment = decodePathSegment(raw);
      if (segment === undefined) {
        throw invalidResourceUri('Resource URI path has a bad escape or an unescaped character.', 'path');
      }
      return segment;
    });
}

function unsupportedShape(host: DaguUriHost): DaguError {
  return invalidResourceUri(`Resource URI path is not a supported dagu://${host} shape.`, 'path');
}

/** The path shapes of one family (spec 020 families table), without the query. */
function matchPath(host: DaguUriHost, segments: readonly string[]): DaguResource {
  const [first, second, ...rest] = segments;
  switch (host) {
    case 'reference':
      if (first === undefined) return { kind: 'references' };
      if (second !== undefined) throw unsupportedShape(host);
      requireValidUriPart(isValidReferenceTopic(first), 'topic', 'reference topic');
      return { kind: 'reference', topic: first };
    case 'dags':
      if (first === undefined) return { kind: 'dags' };
      if (second !== 'spec' || rest.length > 0) throw unsupportedShape(host);
      requireValidUriPart(isValidDagName(first), 'name', 'DAG name');
      return { kind: 'dag_spec', name: first };
    case 'wiki':
      if (first === undefined) return { kind: 'wiki' };
      requireValidUriPart(isValidWikiWorkspace(first), 'workspace', 'wiki workspace');
      if (second === undefined) return { kind: 'wiki', workspace: first };
      if (rest.length > 0) throw unsupportedShape(host);
      if (first === 'all') throw invalidResourceUri('A wiki page URI must name one workspace, not all.', 'workspace');
      requireValidUriPart(isValidWikiPath(second), 'path', 'wiki page path');
      return { kind: 'wiki_page', workspace: first, path: second };
    case 'runs':
      return matchRunsPath(segments);
  }
}

/** Adds the parsed query, which only collection and log kinds accept (spec 021 "Query handling"). */
function withQuery(resource: DaguResource, text: string): DaguResource {
  switch (resource.kind) {
    case 'dags': {
      const query = parseReadQuery('dags', text, 'uri');
      return query ? { ...resource, query } : resource;
    }
    case 'runs': {
      const query = parseReadQuery('runs', text, 'uri');
      return query ? { ...resource, query } : resource;
    }
    case 'wiki': {
      const query = parseReadQuery('wiki', text, 'uri');
      return query ? { ...resource, query } : resource;
    }
    case 'run_logs': {
      const query = parseReadQuery('run_logs', text, 'uri');
      return query ? { ...resource, query } : resource;
    }
    case 'step_log': {
      const query = parseReadQuery('step_log', text, 'uri');
      return query ? { ...resource, query } : resource;
    }
    case 'foreach_items': {
      const query = parseReadQuery('foreach_items', text, 'uri');
      return query ? { ...resource, query } : resource;
    }
    default:
      throw invalidResourceUri(`Query parameters are not supported for ${resource.kind} resources.`, 'query');
  }
}

/**
 * Parses a `dagu://` resource URI (spec 020 "Resource URI Model"; spec 021
 * "Addressing modes" target derivation; dagu-model §2 names, §10 errors).
 *
 * Shapes: `parseDaguUri('dagu://runs/nightly/r1/steps/build%2Fall/logs?tail=100')`
 * → `{kind: 'step_log', name: 'nightly', dagRunId: 'r1', stepName: 'build/all', query: {tail: 100}}`;
 * `parseDaguUri('dagu://wiki/ops/guides%2Fintro')` →
 * `{kind: 'wiki_page', workspace: 'ops', path: 'guides/intro'}`.
 *
 * Decisions:
 * - The scheme is matched case-insensitively (RFC 3986 §3.1: `DAGU://dags`
 *   is accepted); the host is matched exactly, so `dagu://DAGS` is an unknown
 *   family (like Go's `net/url`, which lowercases only the scheme).
 * - Strict syntax: raw characters outside RFC 3986 (spaces, raw non-ASCII), a
 *   `%` without two hex digits, or escapes that are not UTF-8 are malformed.
 * - Empty segments are malformed, so a trailing `/` (`dagu://dags/`) is refused.
 * - Raw `.`/`..` segments are refused; `%2E`/`%2E%2E` are data (a step may be named `..`).
 * - Path keywords (`spec`, `logs`, `sub`, `steps`, `foreach`) are compared
 *   after decoding, as RFC 3986 §6.2.2.2 makes `%6Cogs` equal to `logs`.
 * - A wiki page path is one segment (`a%2Fb`); `dagu://wiki/ws/a/b` is an
 *   unsupported shape, and a page cannot be in workspace `all`.
 * - An empty query (`dagu://dags?`) is absent.
 *
 * @throws DaguError `invalid_resource_uri` (field `uri`, `details.part` or
 *   `details.parameter` when one part is to blame) for a malformed URI, a
 *   fragment, userinfo, a port, a missing or wrong scheme, an unsupported path
 *   shape, an invalid name inside the URI, a query on a kind that takes none,
 *   or a query that breaks the spec 021 table.
 * @throws DaguError `unsupported_resource` (field `uri`) for a well-formed
 *   URI whose host is not a family (`dagu://widgets`), per dagu-model §10.
 */
export function parseDaguUri(uri: string): DaguResource {
  if (uri.includes('#')) throw invalidResourceUri('Resource URI must not have a fragment.', 'fragment');
  const scheme = SCHEME_PREFIX.exec(uri);
  if (scheme?.[1] === undefined) throw invalidResourceUri('Resource URI must use the dagu scheme.', 'scheme');
  if (scheme[1].toLowerCase() !== 'dagu') {
    throw invalidResourceUri(`Resource URI must use the dagu scheme, not ${scheme[1]}.`, 'scheme');
  }
  const rest = uri.slice(scheme[0].length);
  if (!rest.startsWith('//')) throw invalidResourceUri('Resource URI must have the form dagu://<family>/….', 'host');
  const queryStart = rest.indexOf('?');
  const hierarchy = queryStart === -1 ? rest.slice(2) : rest.slice(2, queryStart);
  const queryText = queryStart === -1 ? '' : rest.slice(queryStart + 1);
  const slash = hierarchy.indexOf('/');
  const host = slash === -1 ? hierarchy : hierarchy.slice(0, slash);
  checkHost(host);
  const segments = splitPath(slash === -1 ? '' : hierarchy.slice(slash));
  if (queryText !== '') splitReadQuery(queryText, 'uri');
  const family = DaguUriHostSchema.safeParse(host);
  if (!family.success) {
    throw new DaguError('unsupported_resource', `Resource family dagu://${host} is not supported.`, { field: 'uri' });
  }
  const resource = matchPath(family.data, segments);
  return queryText === '' ? resource : withQuery(resource, queryText);
}
