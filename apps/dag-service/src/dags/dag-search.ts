import type { DagSearchReply, DagSearchRequest } from '@dagu-mcp/contracts';
import type { DagRepository } from './dag.repository';
import { dagSpecUri } from './dag.views';
import { decodeSearchCursor, encodeSearchCursor, type SearchScope } from './search-cursor';
import { extractSnippets } from './search-snippets';

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
 *   line cut to 200 characters around the match) and `hasMoreMatches` when
 *   more lines matched (search-snippets.ts).
 * - `hasMore` tells whether more DAGs match; then `nextCursor` continues
 *   after the last result (search-cursor.ts).
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
  const scope: SearchScope = { search: request.search, workspace };
  const position = request.cursor === undefined ? undefined : decodeSearchCursor(request.cursor, scope);
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
    ...extractSnippets(hit.spec, request.search),
  }));
  const last = hits[hits.length - 1];
  return {
    results,
    hasMore,
    ...(hasMore && last !== undefined ? { nextCursor: encodeSearchCursor({ after: last.name }, scope) } : {}),
  };
}
