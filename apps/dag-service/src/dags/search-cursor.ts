import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';

/**
 * The `dag_search` continuation cursor (spec 021: "Opaque continuation cursor
 * returned by the same search target").
 *
 * Decision: keyset pagination. Results are ordered by DAG name, and the
 * cursor carries the last name of the page, so the next page is
 * `name > after` — stable while DAGs are added or removed between pages
 * (an offset would skip or repeat results then) and served by the primary
 * key index. The cursor is base64url of the JSON `{v: 1, after, scope}`,
 * where `scope` fingerprints the search text and workspace, so a cursor
 * replayed with a different search is refused instead of silently paging
 * through the wrong results. Clients must treat it as opaque.
 */

/** The search a cursor belongs to: the search text and the effective workspace (`all` when absent). */
export interface SearchScope {
  search: string;
  workspace: string | undefined;
}

/** Where the next page starts: after this DAG name. */
export interface SearchPosition {
  after: string;
}

const CURSOR_VERSION = 1;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Far above any real cursor (a 40-char name plus a fingerprint); refuses garbage early. */
const MAX_CURSOR_LENGTH = 512;

const CursorPayloadSchema = z.strictObject({
  v: z.literal(CURSOR_VERSION),
  after: z.string().min(1),
  scope: z.string().min(1),
});

/** A short, stable fingerprint of the search a cursor was issued for. */
function fingerprintOf(scope: SearchScope): string {
  const workspace = scope.workspace === undefined || scope.workspace === 'all' ? 'all' : scope.workspace;
  return createHash('sha256').update(JSON.stringify([scope.search, workspace])).digest('base64url').slice(0, 16);
}

function invalidCursor(): DaguError {
  return new DaguError('invalid_tool_input', 'The cursor is not a cursor returned by this search.', {
    field: 'cursor',
  });
}

/**
 * Writes the cursor of the page after `position`.
 *
 * @returns a base64url string (no padding), opaque to clients.
 */
export function encodeSearchCursor(position: SearchPosition, scope: SearchScope): string {
  const payload = { v: CURSOR_VERSION, after: position.after, scope: fingerprintOf(scope) };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/**
 * Reads a cursor given back by a client.
 *
 * @throws DaguError `invalid_tool_input` on field `cursor` when the cursor is
 *   not base64url, not the JSON this module writes, of another version, or
 *   was issued for a different search text or workspace.
 */
export function decodeSearchCursor(cursor: string, scope: SearchScope): SearchPosition {
  if (cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) throw invalidCursor();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const payload = CursorPayloadSchema.safeParse(json);
  if (!payload.success || payload.data.scope !== fingerprintOf(scope)) throw invalidCursor();
  return { after: payload.data.after };
}
