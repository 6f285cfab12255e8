import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';

/**
 * Opaque continuation cursors for keyset pagination (spec 021: "Opaque
 * continuation cursor returned by the same search target"; 021 "Run
 * collection": `nextCursor` is an opaque string): one codec for `dag_search`,
 * `wiki_search` and the run list.
 *
 * A cursor carries the key of the last item of a page, so the next page
 * starts strictly after it — stable while items are added or removed between
 * pages (an offset would skip or repeat them) and served by the key's index.
 * It is base64url (no padding) of the JSON `{v: 1, after, scope}`: `after` is
 * the position (a DAG name, a run's primary key, a wiki `{workspace, path}`),
 * `scope` a 16-character SHA-256 fingerprint of the query the cursor belongs
 * to, so a cursor replayed with another query is refused instead of silently
 * paging through the wrong results. Clients treat it as opaque.
 *
 * Unified from the three cursor codecs dag-service, wiki-service and
 * run-service each had before this package:
 * - Payload: dag and run wrote `{v, after, scope}`, wiki `{v, w, p, s}`. The
 *   first shape is kept, key order included, so DAG and run cursors issued
 *   before the change still decode; a wiki cursor issued before it is refused
 *   once (`invalid_tool_input`, "start again without it").
 * - Longest accepted cursor: 512 (dag), 4096 (wiki), 256 (run) characters.
 *   One limit, {@link MAX_CURSOR_CHARS} = 4096: it only refuses garbage before
 *   decoding, and a wiki position holds a path of up to 1024 characters.
 * - Message: three wordings of the same error; the wiki's, which says what
 *   to do, is kept. Code and field were already the same everywhere:
 *   `invalid_tool_input` on `cursor`.
 * - Fingerprint: the same everywhere (SHA-256 of the JSON of the scope,
 *   base64url, 16 characters); normalizing the scope (`all` = no workspace,
 *   sorted filter lists) stays with each caller, who knows its query.
 */

/** Longest cursor decoded, in characters. */
export const MAX_CURSOR_CHARS = 4096;
const CURSOR_VERSION = 1;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The encoder and decoder of one kind of cursor. */
export interface KeysetCursor<P> {
  /**
   * Writes the cursor of the page after `position`.
   *
   * @param scope the query the cursor belongs to, normalized by the caller;
   *   any JSON value (only its fingerprint is stored)
   * @returns base64url without padding, opaque to clients
   */
  encode(position: P, scope: unknown): string;
  /**
   * Reads a cursor a client sent back.
   *
   * @throws DaguError `invalid_tool_input` on field `cursor` when the cursor
   *   is longer than {@link MAX_CURSOR_CHARS}, not base64url, not the JSON
   *   this codec writes, of another version, holds a position its schema
   *   refuses, or was issued for another scope
   */
  decode(cursor: string, scope: unknown): P;
}

/** A short, stable fingerprint of the query a cursor was issued for. */
export function scopeFingerprint(scope: unknown): string {
  return createHash('sha256').update(JSON.stringify(scope)).digest('base64url').slice(0, 16);
}

/** `invalid_tool_input` on `cursor`: the error of every cursor that cannot be used. */
export function invalidCursorError(): DaguError {
  return new DaguError('invalid_tool_input', 'The cursor was not returned by this query; start again without it.', {
    field: 'cursor',
  });
}

/**
 * A cursor codec whose positions `position` validates, e.g.
 * `createKeysetCursor(z.number().int().positive())` for a run's primary key.
 */
export function createKeysetCursor<P>(position: z.ZodType<P>): KeysetCursor<P> {
  const payloadSchema = z.strictObject({ v: z.literal(CURSOR_VERSION), after: position, scope: z.string().min(1) });
  return {
    encode(after: P, scope: unknown): string {
      return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after, scope: scopeFingerprint(scope) }), 'utf8').toString(
        'base64url',
      );
    },
    decode(cursor: string, scope: unknown): P {
      if (cursor.length > MAX_CURSOR_CHARS || !BASE64URL.test(cursor)) throw invalidCursorError();
      let json: unknown;
      try {
        json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      } catch {
        throw invalidCursorError();
      }
      const payload = payloadSchema.safeParse(json);
      if (!payload.success || payload.data.scope !== scopeFingerprint(scope)) throw invalidCursorError();
      return payload.data.after;
    },
  };
}
