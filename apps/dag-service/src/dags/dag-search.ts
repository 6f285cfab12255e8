import type { DagSearchReply, DagSearchRequest } from '@dagu-mcp/contracts';
import { decodeDagSearchCursor, encodeDagSearchCursor, findLineMatches, type DagSearchScope } from '@dagu-mcp/search';
import type { DagRepository } from './dag.repository';
import { dagSpecUri } from './dag.views';

/**
 * DAG search (spec 021 `dag_search` target, DAG search model).
 *
 * - A DAG matches when its stored YAML contains the search text,
 *   case-insensitively (the DAG name is not searched unless the YAML
 *   contains it, as Dagu searches DAG file contents).
 * - `workspace`: absent or `all` searches every DAG; any other value only the
 *   DAGs whose `workspace=<name>` label equals it (dagu-model §10).
 * - Results are ordered by DAG name; `limit` defaults to
 *   {@link DEFAULT_SEARCH_LIMIT} (the contract allows 1..{@link MAX_SEARCH_LIMIT}).
 * - Each result has up to 5 matching lines (`{line, text}`, 1-based, a long
 *   line cut to 240 characters around the match) and `hasMoreMatches` when
 *   more lines matched (`findLineMatches` of `@dagu-mcp/search`).
 * - `hasMore` tells whether more DAGs match; then `nextCursor` continues
 *   after the last result (`dag-search-cursor.ts` of `@dagu-mcp/search`).
 */

/** Results per page when the request has no `limit`. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Largest `limit` (spec 021 `limit`: 1 through 50). */
export const MAX_SEARCH_LIMIT = 50;

/** The workspace filter of a request: `undefined` for absent or `all`. */
export function workspaceFilterOf(workspace: string | undefined): string | undefined {
  return workspace === undefined || workspace === 'all' ? undefined : workspace;
}

/**
 * One page of DAG search results.
 *
 * @throws DaguError `invalid_tool_input` on field `cursor` for a cursor this
 *   search did not issue; `resource_unavailable` when PostgreSQL is unavailable.
 */
export async function searchDagSpecs(repository: DagRepository, request: DagSearchRequest): Promise<DagSearchReply> {
  const workspace = workspaceFilterOf(request.workspace);
  const scope: DagSearchScope = { search: request.search, workspace };
  const position = request.cursor === undefined ? undefined : decodeDagSearchCursor(request.cursor, scope);
  const limit = Math.min(Math.max(1, request.limit ?? DEFAULT_SEARCH_LIMIT), MAX_SEARCH_LIMIT);
  const { hits, hasMore } = await repository.search({
    search: request.search,
    workspace,
    after: position?.after,
    limit,
  });
  const results = hits.map((hit) => ({
    name: hit.name,
    uri: dagSpecUri(hit.name),
    ...findLineMatches(hit.spec, request.search),
  }));
  const last = hits[hits.length - 1];
  return {
    results,
    hasMore,
    ...(hasMore && last !== undefined ? { nextCursor: encodeDagSearchCursor({ after: last.name }, scope) } : {}),
  };
}
