import { createHash } from 'node:crypto';
import { DaguError, type RunsQuery } from '@dagu-mcp/contracts';
import { z } from 'zod';

/**
 * The `runs` continuation cursor (021 "Run collection": `nextCursor` is an
 * opaque string). Keyset pagination on the run's primary key (runs are
 * listed newest first, and pk order is creation order): the cursor carries
 * the last pk of the page, so the next page is `pk < after` — stable while
 * runs are added. It is base64url of `{v: 1, after, scope}`, where `scope`
 * fingerprints the filters (every query parameter but `cursor` and `limit`),
 * so a cursor replayed with other filters is refused instead of paging
 * through the wrong list.
 */

const CursorSchema = z.strictObject({ v: z.literal(1), after: z.number().int().positive(), scope: z.string() });

/** The filters a cursor is bound to. */
function scopeOf(query: RunsQuery): string {
  const filters = {
    name: query.name ?? null,
    dagRunId: query.dagRunId ?? null,
    status: [...(query.status ?? [])].sort((a, b) => a - b),
    fromDate: query.fromDate ?? null,
    toDate: query.toDate ?? null,
    labels: [...(query.labels ?? [])].sort(),
  };
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
}

function invalidCursor(): DaguError {
  return new DaguError('invalid_tool_input', 'The cursor is not a cursor returned by this runs query.', { field: 'cursor' });
}

/** The cursor of the page after the run with primary key `after`. */
export function encodeRunsCursor(after: number, query: RunsQuery): string {
  return Buffer.from(JSON.stringify({ v: 1, after, scope: scopeOf(query) }), 'utf8').toString('base64url');
}

/**
 * Reads a cursor given back by a client.
 *
 * @returns the pk the next page starts below
 * @throws DaguError `invalid_tool_input` (field `cursor`) when it is not a
 *   cursor of this query's filters
 */
export function decodeRunsCursor(cursor: string, query: RunsQuery): number {
  if (cursor.length > 256 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const parsed = CursorSchema.safeParse(json);
  if (!parsed.success || parsed.data.scope !== scopeOf(query)) throw invalidCursor();
  return parsed.data.after;
}
