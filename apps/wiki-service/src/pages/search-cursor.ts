import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';

/**
 * The `wiki_search` continuation cursor (spec 021: "Opaque continuation
 * cursor returned by the same search target"; dagu-model §7).
 *
 * Decision: keyset pagination on `(workspace, path)`, the order results are
 * returned in. The cursor names the last page of the previous result page,
 * so the next one starts strictly after it: no result is skipped or repeated
 * when pages are written between calls, and the primary-key order serves it.
 * It is base64url of `{v, w, p, s}`: version, last workspace, last path, and a
 * fingerprint of the search (text, workspace selector, prefix) so a cursor
 * replayed with another search is refused rather than silently misapplied.
 */

/** What a cursor is bound to. `workspace` absent or `all` are the same search. */
export interface SearchScope {
  search: string;
  workspace: string | undefined;
  prefix: string | undefined;
}

/** Where the next result page starts: strictly after this page. */
export interface SearchPosition {
  workspace: string;
  path: string;
}

const VERSION = 1;
const MAX_CURSOR_CHARS = 4096;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const PayloadSchema = z.strictObject({
  v: z.literal(VERSION),
  w: z.string().min(1),
  p: z.string().min(1),
  s: z.string().min(1),
});

function fingerprint(scope: SearchScope): string {
  const workspace = scope.workspace === undefined || scope.workspace === 'all' ? 'all' : scope.workspace;
  return createHash('sha256')
    .update(JSON.stringify([scope.search, workspace, scope.prefix ?? '']))
    .digest('base64url')
    .slice(0, 16);
}

function badCursor(): DaguError {
  return new DaguError('invalid_tool_input', 'The cursor was not returned by this search; start again without it.', {
    field: 'cursor',
  });
}

/** Writes the cursor of the result page after `position`: an opaque base64url string. */
export function encodeSearchCursor(position: SearchPosition, scope: SearchScope): string {
  const payload = { v: VERSION, w: position.workspace, p: position.path, s: fingerprint(scope) };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/**
 * Reads a cursor a client sent back.
 *
 * @throws DaguError `invalid_tool_input` on field `cursor` when it is not
 *   base64url JSON of this shape and version, or belongs to another search
 */
export function decodeSearchCursor(cursor: string, scope: SearchScope): SearchPosition {
  if (cursor.length > MAX_CURSOR_CHARS || !BASE64URL.test(cursor)) throw badCursor();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  const payload = PayloadSchema.safeParse(json);
  if (!payload.success || payload.data.s !== fingerprint(scope)) throw badCursor();
  return { workspace: payload.data.w, path: payload.data.p };
}
