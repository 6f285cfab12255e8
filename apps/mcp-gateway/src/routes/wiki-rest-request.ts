import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';
import { parseRequest, runParser } from './parse-body';

/**
 * Request parts of the wiki REST routes (wiki.routes.ts) that are not path
 * parameters: the page body, the conditional-request headers, and the
 * `Location` of a created page.
 */

/** An entity tag as the wiki routes write it: the page version in double quotes (`"3"`). */
const STRONG_ETAG = /^"([1-9][0-9]{0,9})"$/;

function badHeader(header: string, message: string): DaguError {
  return new DaguError('invalid_request', `${header}: ${message}`, { field: header });
}

/**
 * The version a write is conditional on (RFC 9110 §13.1):
 * - `If-Match: "<version>"` (the `ETag` of a read or write) → that version;
 * - `If-None-Match: *` (PUT only) → `0`, "create only";
 * - neither → `undefined`, unconditional.
 *
 * @throws DaguError `invalid_request` (field = the header) for both headers
 *   at once, `If-Match: *`, a list or weak tag, or `If-None-Match` other than `*`
 */
export function expectedVersionOf(req: Request, method: 'put' | 'delete'): number | undefined {
  const ifMatch = req.header('if-match')?.trim();
  const ifNoneMatch = req.header('if-none-match')?.trim();
  if (ifMatch !== undefined && ifNoneMatch !== undefined) {
    throw badHeader('If-Match', 'give either If-Match or If-None-Match, not both');
  }
  if (ifNoneMatch !== undefined) {
    if (method !== 'put' || ifNoneMatch !== '*')
      throw badHeader('If-None-Match', 'only "If-None-Match: *" on PUT (create only) is supported');
    return 0;
  }
  if (ifMatch === undefined) return undefined;
  const version = STRONG_ETAG.exec(ifMatch)?.[1];
  if (version === undefined) throw badHeader('If-Match', 'must be one entity tag as returned in ETag, e.g. "3"');
  return Number(version);
}

/**
 * The Markdown of a `PUT`: a `text/markdown` (or `text/plain`) body as is,
 * else the `content` of a JSON body (already parsed by the REST router).
 *
 * @param textParser `express.text` for the Markdown types, with the page size limit
 * @param schema the JSON body schema, `{content: string}` (strict)
 * @throws DaguError `invalid_request` when the body is neither; body-parser
 *   errors (413 when larger than the limit) are rethrown for the REST error handler
 */
export async function readPageBody(
  req: Request,
  res: Response,
  textParser: RequestHandler,
  schema: z.ZodType<{ content: string }>,
): Promise<string> {
  if (typeof req.is(['text/markdown', 'text/plain']) === 'string') {
    await runParser(textParser, req, res);
    const body: unknown = req.body;
    if (typeof body !== 'string')
      throw new DaguError('invalid_request', 'body: the Markdown body could not be read', { field: 'body' });
    return body;
  }
  return parseRequest(schema, req.body).content;
}

/** The URL of a page under the router's base (`/api/v1` or `<BASE_PATH>/api/v1`), each segment encoded. */
export function pageLocation(req: Request, workspace: string, path: string): string {
  const segments = path.split('/').map(encodeURIComponent).join('/');
  return `${req.baseUrl}/wiki/${encodeURIComponent(workspace)}/pages/${segments}`;
}
