import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, wikiOps, type Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { ChangeRequest } from './change-input';
import { changeResult, roleWarnings, wikiPageLink } from './change-output';

const KIND = { upsert_wiki_page: 'upsert', rename_wiki_page: 'rename', delete_wiki_page: 'delete' } as const;

/**
 * The wiki types of `dagu_change` (Dagu spec 022b): `upsert_wiki_page`,
 * `rename_wiki_page`, `delete_wiki_page`. Preview asks wiki-service's
 * `wiki.check` (the same checks as the write, no write, any role); apply
 * calls `wiki.put` / `wiki.rename` / `wiki.delete`, which check the
 * developer role again. Content that the page write refuses (bad
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
  const opts = { principal };
  if (request.mode === 'preview') {
    const check = await bus.call(
      'wiki',
      wikiOps,
      'wiki.check',
      {
        kind: KIND[type],
        workspace,
        path,
        ...(request.newPath !== undefined ? { newPath: request.newPath } : {}),
        ...(request.content !== undefined ? { content: request.content } : {}),
      },
      opts,
    );
    const fields = type === 'rename_wiki_page' ? { ...page, newPath: request.newPath } : page;
    const links = check.exists ? [wikiPageLink(pageUri)] : [];
    return changeResult(request, {
      valid: check.valid,
      errors: check.errors,
      applied: false,
      fields,
      warnings: roleWarnings(principal),
      links,
    });
  }
  if (type === 'upsert_wiki_page') {
    try {
      const reply = await bus.call(
        'wiki',
        wikiOps,
        'wiki.put',
        { workspace, path, content: request.content ?? '' },
        opts,
      );
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
    await bus.call('wiki', wikiOps, 'wiki.rename', { workspace, path, newPath }, opts);
    const newUri = request.newPageUri ?? '';
    return changeResult(request, {
      valid: true,
      applied: true,
      fields: { workspace, path: newPath, pageUri: newUri, previousPath: path, renamed: true },
      links: [wikiPageLink(newUri)],
    });
  }
  await bus.call('wiki', wikiOps, 'wiki.delete', { workspace, path }, opts);
  return changeResult(request, { valid: true, applied: true, fields: { ...page, deleted: true } });
}
