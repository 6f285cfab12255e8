import {
  requireOpRole,
  wikiOps,
  type OpReply,
  type OpRequest,
  type Principal,
  type WikiOps,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { timeoutOf, type ReadOptions } from './read-options';

/**
 * Wiki pages (Dagu spec 021 Wiki models, 022b wiki change types; dagu-model
 * §7, §9; docs/rest-api.md "Wiki"): each action is one wiki-service call.
 * Reads are every role's; writes need developer and up, which wiki-service
 * checks again. Errors are wiki-service's: `resource_not_found` (workspace or
 * page), `conflict` (`expectedVersion` not met, a taken `newPath`),
 * `invalid_tool_input` (bad frontmatter on `content`, a foreign `cursor`),
 * `resource_unavailable` (no answer by the bus deadline; a write is never
 * applied after it).
 */

type Request<K extends keyof WikiOps> = OpRequest<WikiOps, K>;
type Reply<K extends keyof WikiOps> = OpReply<WikiOps, K>;

/**
 * Lists pages (`wiki.list`, 021 `wiki`): a `tree` (default) or flat `items`,
 * with `pagination`; `workspace` absent or `all` = every workspace.
 * @throws DaguError `resource_not_found` (unknown workspace), `invalid_tool_input`
 */
export async function listWikiPages(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.list'>,
  options: ReadOptions = {},
): Promise<Reply<'wiki.list'>> {
  requireOpRole(principal, 'wiki.list');
  return bus.call('wiki', wikiOps, 'wiki.list', input, { principal, ...timeoutOf(options) });
}

/**
 * One page (`wiki.get`, 021 `wiki_page`): its Markdown `content`, metadata and `version`.
 * @throws DaguError `resource_not_found` (workspace or page)
 */
export async function getWikiPage(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.get'>,
): Promise<Reply<'wiki.get'>> {
  requireOpRole(principal, 'wiki.get');
  return bus.call('wiki', wikiOps, 'wiki.get', input, { principal });
}

/**
 * Full-text search over pages (`wiki.search`, 021 `wiki_search`; `limit` 1–50, default 20).
 * @throws DaguError `invalid_tool_input` on `cursor` (a cursor of another search)
 */
export async function searchWiki(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.search'>,
): Promise<Reply<'wiki.search'>> {
  requireOpRole(principal, 'wiki.search');
  return bus.call('wiki', wikiOps, 'wiki.search', input, { principal });
}

/**
 * Creates or replaces a page (`wiki.put`; 022b `upsert_wiki_page` apply, REST
 * `PUT`). `expectedVersion` 0 = create only, N = the page must be at version N.
 * @returns the page's metadata, `created`, and `changed` (false when the content was identical)
 * @throws DaguError `unauthorized` below developer, `invalid_tool_input` on `content`
 *   (bad frontmatter), `conflict` on `expectedVersion` (`details.currentVersion`)
 */
export async function putWikiPage(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.put'>,
): Promise<Reply<'wiki.put'>> {
  requireOpRole(principal, 'wiki.put');
  return bus.call('wiki', wikiOps, 'wiki.put', input, { principal });
}

/**
 * Deletes a page (`wiki.delete`; 022b `delete_wiki_page` apply, REST `DELETE`),
 * conditional on `expectedVersion` when given.
 * @throws DaguError `unauthorized` below developer, `resource_not_found`, `conflict` on `expectedVersion`
 */
export async function deleteWikiPage(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.delete'>,
): Promise<Reply<'wiki.delete'>> {
  requireOpRole(principal, 'wiki.delete');
  return bus.call('wiki', wikiOps, 'wiki.delete', input, { principal });
}

/**
 * Moves a page to `newPath` in its workspace (`wiki.rename`, 022b
 * `rename_wiki_page`); links to it are not rewritten.
 * @throws DaguError `unauthorized` below developer, `resource_not_found`, `conflict` (`newPath` taken)
 */
export async function renameWikiPage(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.rename'>,
): Promise<Reply<'wiki.rename'>> {
  requireOpRole(principal, 'wiki.rename');
  return bus.call('wiki', wikiOps, 'wiki.rename', input, { principal });
}

/**
 * The preview of a wiki change (`wiki.check`, 022b): every check the write of
 * `kind` would run, nothing written, any role.
 * @returns `{valid, errors, exists}`; content the write would refuse is `valid: false`, not an error
 * @throws DaguError `resource_not_found` (rename, delete: no such page), `conflict` (rename: `newPath` taken)
 */
export async function checkWikiChange(
  bus: BusClient,
  principal: Principal,
  input: Request<'wiki.check'>,
): Promise<Reply<'wiki.check'>> {
  requireOpRole(principal, 'wiki.check');
  return bus.call('wiki', wikiOps, 'wiki.check', input, { principal });
}
