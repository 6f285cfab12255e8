import { DaguError, WikiQuerySchema, type WikiListRequest, type WikiSearchRequest } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { getWikiPage, listWikiPages, searchWiki } from '../../../actions/wiki.actions';
import type { ReadBackend } from './read-backends';
import type { ReadRequest } from './read-input';

/**
 * The Wiki read targets of spec 021 (`wiki`, `wiki_page`, `wiki_search`;
 * the deprecated `docs`, `doc`, `doc_search` resolve to them in read-input),
 * each one action of actions/wiki.actions.ts (one wiki-service call). The request was validated by
 * read-input (021 §Input, §Query handling) in target or URI mode; the
 * payload is re-checked by the bus against the op's contract schema.
 *
 * - `wiki` → `wiki.list {workspace?, page?, perPage?, flat?, sort?, order?, prefix?}`
 *   (Wiki collection model: `tree` or `items`, `pagination`);
 * - `wiki_page` → `wiki.get {workspace, path}` (Wiki page model; `resources/read`
 *   serves its `content` as `text/markdown`);
 * - `wiki_search` → `wiki.search {search, workspace?, prefix?, cursor?, limit?}`
 *   (Wiki search model).
 *
 * The echo of `workspace`, `path` and `prefix` is read-tool's (021 §Output).
 * Errors are wiki-service's: `resource_not_found` for an unknown workspace or
 * page, `invalid_tool_input` on `cursor` for a cursor of another search,
 * `resource_unavailable` when it does not answer in time.
 */
export function createWikiReadBackends(bus: BusClient): {
  wiki: ReadBackend;
  wiki_page: ReadBackend;
  wiki_search: ReadBackend;
} {
  return {
    wiki: async (request, principal) => listWikiPages(bus, principal, wikiListPayload(request)),
    wiki_page: async (request, principal) => {
      const { workspace, path } = request.fields;
      return getWikiPage(bus, principal, { workspace: workspace ?? '', path: path ?? '' });
    },
    wiki_search: async (request, principal) => searchWiki(bus, principal, wikiSearchPayload(request)),
  };
}

/**
 * The `wiki.list` payload of a `wiki` read: the parsed `query` (target-mode
 * `query` field or the URI's query), the `workspace` (absent = `all`), and the
 * target-mode `prefix` field.
 *
 * Decision: spec 021 allows `prefix` both as a field and as a query
 * parameter; given both, they must agree.
 *
 * @throws DaguError `invalid_tool_input` on field `prefix` when the field and
 *   the query parameter differ
 */
export function wikiListPayload(request: ReadRequest): WikiListRequest {
  const query = WikiQuerySchema.parse(request.query ?? {});
  const { workspace, prefix } = request.fields;
  if (prefix !== undefined && query.prefix !== undefined && prefix !== query.prefix) {
    throw new DaguError(
      'invalid_tool_input',
      'The prefix field and the prefix query parameter differ; give one of them.',
      {
        field: 'prefix',
      },
    );
  }
  return {
    ...query,
    ...(prefix !== undefined ? { prefix } : {}),
    ...(workspace !== undefined ? { workspace } : {}),
  };
}

/** The `wiki.search` payload of a `wiki_search` read (`limit` 1–50 checked by read-input). */
export function wikiSearchPayload(request: ReadRequest): WikiSearchRequest {
  const { search, workspace, prefix, cursor, limit } = request.fields;
  return {
    search: search ?? '',
    ...(workspace !== undefined ? { workspace } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}
