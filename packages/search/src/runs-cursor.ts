import { z } from 'zod';
import type { RunsQuery } from '@dagu-mcp/contracts';
import { createKeysetCursor } from './keyset-cursor';

/**
 * The `runs` continuation cursor (021 "Run collection": `nextCursor` is an
 * opaque string): the shared keyset codec (`keyset-cursor.ts`: format,
 * limits, `invalid_tool_input` on `cursor`) with the run list's position and
 * scope. For run-service's run list.
 *
 * Runs are listed newest first and primary-key order is creation order, so
 * the position is the last pk of the page and the next page is `pk < after`
 * — stable while runs are added. The scope is every filter of the query but
 * `cursor` and `limit`, with list filters sorted, so a cursor replayed with
 * other filters is refused. Same payload and fingerprint as the codec run-service
 * had before this package, so its cursors stayed valid across the switch.
 */

const runPkCursor = createKeysetCursor(z.number().int().positive());

/** The filters a cursor is bound to. */
function scopeKey(query: RunsQuery): unknown {
  return {
    name: query.name ?? null,
    dagRunId: query.dagRunId ?? null,
    status: [...(query.status ?? [])].sort((a, b) => a - b),
    fromDate: query.fromDate ?? null,
    toDate: query.toDate ?? null,
    labels: [...(query.labels ?? [])].sort(),
  };
}

/** The cursor of the page after the run with primary key `after`. */
export function encodeRunsCursor(after: number, query: RunsQuery): string {
  return runPkCursor.encode(after, scopeKey(query));
}

/**
 * Reads a cursor given back by a client.
 *
 * @returns the pk the next page starts below
 * @throws DaguError `invalid_tool_input` (field `cursor`) when it is not a
 *   cursor of this query's filters
 */
export function decodeRunsCursor(cursor: string, query: RunsQuery): number {
  return runPkCursor.decode(cursor, scopeKey(query));
}
