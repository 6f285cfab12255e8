import express, { type Request } from 'express';
import { z } from 'zod';
import {
  DaguError,
  WIKI_PAGE_MAX_BYTES,
  WikiPrefixSchema,
  isValidWikiPath,
  isValidWikiWorkspace,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { deleteWikiPage, getWikiPage, listWikiPages, putWikiPage } from '../actions/wiki.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';
import { expectedVersionOf, pageLocation, readPageBody } from './wiki-rest-request';
import { requestIdOf } from '../http/request-id';

/**
 * Wiki pages over REST (issue: "page writes over REST"; dagu-model §7, §9).
 * Documented in docs/rest-api.md. Every route is one action of
 * actions/wiki.actions.ts (one wiki-service call):
 *
 * | Route | Role | Success |
 * | --- | --- | --- |
 * | `GET /wiki/{workspace}/pages` | viewer | 200 collection (`wiki.list`; `workspace` may be `all`) |
 * | `GET /wiki/{workspace}/pages/{path…}` | viewer | 200 page JSON, or the Markdown with `Accept: text/markdown`; `ETag` |
 * | `PUT /wiki/{workspace}/pages/{path…}` | developer | 201 created / 200 updated, the page as GET shows it plus `created`, `changed`; `ETag` |
 * | `DELETE /wiki/{workspace}/pages/{path…}` | developer | 204 |
 *
 * The page path is the rest of the URL, raw (`…/pages/runbooks/deploy`) or
 * as one encoded segment (`…/pages/runbooks%2Fdeploy`). `PUT` takes JSON
 * `{content}` or a `text/markdown` body; `If-Match: "<version>"` and
 * `If-None-Match: *` make writes conditional (409 `conflict` when not met).
 * Input faults, the service's `invalid_tool_input` included, are 400
 * `invalid_request` naming the field (http/rest-errors.ts); the bus deadline
 * bounds every write, which is never applied after it (503).
 */

/** `GET /wiki/{workspace}/pages` query: the spec 021 `wiki` query, as strings. */
const ListQuerySchema = z.strictObject({
  page: z.coerce.number().int().min(1).optional(),
  perPage: z.coerce.number().int().min(1).max(200).optional(),
  flat: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  sort: z.enum(['name', 'type', 'mtime']).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  prefix: WikiPrefixSchema.optional(),
});

/** `PUT` JSON body. */
export const PutPageBodySchema = z.strictObject({
  content: z
    .string()
    .describe(
      `The page Markdown, optional YAML frontmatter (title, tags) included; at most ${WIKI_PAGE_MAX_BYTES} bytes.`,
    ),
});

const PAGE_PATH = '/wiki/:workspace/pages/*path';

/** The `{workspace}` of the URL; `all` only where `allowAll` (listing). @throws DaguError `invalid_request` */
function workspaceOf(req: Request, allowAll: boolean): string {
  const workspace = String(req.params.workspace);
  if (!isValidWikiWorkspace(workspace) || (!allowAll && workspace === 'all')) {
    const why = workspace === 'all' ? 'a page belongs to one workspace, not all' : 'not a valid workspace name';
    throw new DaguError('invalid_request', `workspace: ${why}`, { field: 'workspace' });
  }
  return workspace;
}

/** The `{path…}` of the URL, segments joined by `/`. @throws DaguError `invalid_request` (dagu-model §2 rules) */
function pathOf(req: Request): string {
  const raw: unknown = req.params.path;
  const path = Array.isArray(raw) ? raw.map(String).join('/') : typeof raw === 'string' ? raw : '';
  if (!isValidWikiPath(path)) {
    throw new DaguError(
      'invalid_request',
      'path: segments of A-Z a-z 0-9 . _ - joined by /, no "..", no leading or trailing /',
      { field: 'path' },
    );
  }
  return path;
}

/** Builds the wiki route module on the gateway's bus client. */
export function wikiRoutes(deps: { bus: BusClient; maxPageBytes?: number }): RestRoutes {
  const maxPageBytes = deps.maxPageBytes ?? WIKI_PAGE_MAX_BYTES;
  const textBody = express.text({ type: ['text/markdown', 'text/plain'], limit: maxPageBytes });
  return (routes) => {
    routes.get(
      '/wiki/:workspace/pages',
      {
        action: 'wiki.list',
        summary: 'List wiki pages: tree (default) or flat=true',
        tag: 'wiki',
        query: ListQuerySchema,
      },
      async (req, res) => {
        const workspace = workspaceOf(req, true);
        const query = parseRequest(ListQuerySchema, req.query);
        res.json(await listWikiPages(deps.bus, principalOf(res), { ...query, workspace }));
      },
    );

    routes.get(
      PAGE_PATH,
      { action: 'wiki.get', summary: 'Read one wiki page (JSON, or Markdown with Accept: text/markdown)', tag: 'wiki' },
      async (req, res) => {
        const ref = { workspace: workspaceOf(req, false), path: pathOf(req) };
        const page = await getWikiPage(deps.bus, principalOf(res), ref);
        res.setHeader('ETag', `"${page.version}"`);
        if (req.accepts(['application/json', 'text/markdown']) === 'text/markdown') {
          res.type('text/markdown; charset=utf-8').send(page.content);
          return;
        }
        res.json(page);
      },
    );

    routes.put(
      PAGE_PATH,
      {
        action: 'wiki.put',
        summary: 'Create or replace a wiki page (If-Match / If-None-Match: *)',
        tag: 'wiki',
        body: PutPageBodySchema,
        textBody: true,
      },
      async (req, res) => {
        const workspace = workspaceOf(req, false);
        const path = pathOf(req);
        const content = await readPageBody(req, res, textBody, PutPageBodySchema);
        if (Buffer.byteLength(content, 'utf8') > maxPageBytes) {
          res.status(413).json({
            code: 'invalid_request',
            message: `content: a page is at most ${maxPageBytes} bytes.`,
            field: 'content',
            requestId: requestIdOf(res),
          });
          return;
        }
        const expectedVersion = expectedVersionOf(req, 'put');
        const payload = { workspace, path, content, ...(expectedVersion !== undefined ? { expectedVersion } : {}) };
        const reply = await putWikiPage(deps.bus, principalOf(res), payload);
        res.setHeader('ETag', `"${reply.page.version}"`);
        if (reply.created) res.status(201).setHeader('Location', pageLocation(req, workspace, path));
        // The body is the page as GET shows it (issue: "body as GET"), plus what the write did.
        res.json({ ...reply.page, content, mimeType: 'text/markdown', created: reply.created, changed: reply.changed });
      },
    );

    routes.delete(
      PAGE_PATH,
      { action: 'wiki.delete', summary: 'Delete a wiki page (If-Match)', tag: 'wiki', status: 204 },
      async (req, res) => {
        const ref = { workspace: workspaceOf(req, false), path: pathOf(req) };
        const expectedVersion = expectedVersionOf(req, 'delete');
        await deleteWikiPage(deps.bus, principalOf(res), {
          ...ref,
          ...(expectedVersion !== undefined ? { expectedVersion } : {}),
        });
        res.status(204).end();
      },
    );
  };
}
