import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, type Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { checkWikiChange, deleteWikiPage, putWikiPage, renameWikiPage } from '../../../actions/wiki.actions';
import type { ChangeRequest } from './change-input';
import { changeResult, roleWarnings, wikiPageLink } from './change-output';

const KIND = { upsert_wiki_page: 'upsert', rename_wiki_page: 'rename', delete_wiki_page: 'delete' } as const;

/**
 * The wiki types of `dagu_change` (Dagu spec 022b): `upsert_wiki_page`,
 * `rename_wiki_page`, `delete_wiki_page`. Preview is `checkWikiChange`
 * (the same checks as the write, no write, any role); apply is
 * `putWikiPage` / `renameWikiPage` / `deleteWikiPage` (actions/wiki.actions.ts),
 * which check the op's role. Content that the page write refuses (bad
 * frontmatter) is `valid=false`, not a tool error, in both modes.
 *
 * @throws DaguError from the service: `resource_not_found`, `conflict`,
 *   `unauthorized` (apply), `resource_unavailable`
 */
export async function runWikiChange(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const { workspace = '', path = '', pageUri = '' } = request;
  const type = request.type;
  if (type !== 'upsert_wiki_page' && type !== 'rename_wiki_page' && type !== 'delete_wiki_page') {
    throw new DaguError('internal_error', `Not a wiki change type: ${type}.`);
  }
  const page = { workspace, path, pageUri };
  if (request.mode === 'preview') {
    const check = await checkWikiChange(bus, principal, {
      kind: KIND[type],
      workspace,
      path,
      ...(request.newPath !== undefined ? { newPath: request.newPath } : {}),
      ...(request.content !== undefined ? { content: request.content } : {}),
    });
    const fields = type === 'rename_wiki_page' ? { ...page, newPath: request.newPath } : page;
    const links = check.exists ? [wikiPageLink(pageUri)] : [];
    return changeResult(request, {
      valid: check.valid,
      errors: check.errors,
      applied: false,
      fields,
      warnings: roleWarnings(principal, type),
      links,
    });
  }
  if (type === 'upsert_wiki_page') {
    try {
      const reply = await putWikiPage(bus, principal, { workspace, path, content: request.content ?? '' });
      return changeResult(request, {
        valid: true,
        applied: true,
        fields: { ...page, created: reply.created, updated: !reply.created },
        links: [wikiPageLink(pageUri)],
      });
    } catch (error) {
      // Content the write refuses is a validation outcome, as 022 makes a bad DAG spec.
      if (error instanceof DaguError && error.code === 'invalid_tool_input' && error.field === 'content') {
        return changeResult(request, { valid: false, errors: [error.message], applied: false, fields: page });
      }
      throw error;
    }
  }
  if (type === 'rename_wiki_page') {
    const newPath = request.newPath ?? '';
    await renameWikiPage(bus, principal, { workspace, path, newPath });
    const newUri = request.newPageUri ?? '';
    return changeResult(request, {
      valid: true,
      applied: true,
      fields: { workspace, path: newPath, pageUri: newUri, previousPath: path, renamed: true },
      links: [wikiPageLink(newUri)],
    });
  }
  await deleteWikiPage(bus, principal, { workspace, path });
  return changeResult(request, { valid: true, applied: true, fields: { ...page, deleted: true } });
}
