import type { StepLogQuery } from '@dagu-mcp/contracts';

/**
 * The reader arithmetic of dagu-model §6 (021 `step_log`, `run_logs`), pure
 * so it is tested on its own. Lines are numbered from 1.
 *
 * - tail N: the last N lines; head N: the first N;
 * - offset O (1-based) with limit L: lines O … O+L−1; `limit` alone reads
 *   from line 1; `offset` alone reads {@link DEFAULT_RANGE_LIMIT} lines;
 * - nothing given: the last {@link DEFAULT_STEP_TAIL} lines (step logs) or
 *   the last {@link DEFAULT_SCHEDULER_TAIL} (the scheduler log);
 * - `hasMore`: tail/head → returned < total; range → O + returned − 1 < total;
 *   an empty stream or an offset past the end → no lines, `hasMore = false`.
 */

/** Step-log default: the last 1000 lines (dagu-model §6). */
export const DEFAULT_STEP_TAIL = 1000;
/** Scheduler-log default: the last 500 lines (dagu-model §6). */
export const DEFAULT_SCHEDULER_TAIL = 500;
/** Lines read by `offset` without `limit` (a choice of this project: the step-log default window). */
export const DEFAULT_RANGE_LIMIT = 1000;

/** Which lines to read. */
export type LogSelection =
  { kind: 'tail'; count: number } | { kind: 'head'; count: number } | { kind: 'range'; offset: number; limit: number };

/** Lines `from` … `to` (1-based, inclusive); empty when `to < from`. */
export interface LineWindow {
  from: number;
  to: number;
}

/** The selection a step-log query asks for (the query is already validated by its schema). */
export function selectionOf(query: StepLogQuery | undefined, defaultTail = DEFAULT_STEP_TAIL): LogSelection {
  if (query?.tail !== undefined) return { kind: 'tail', count: query.tail };
  if (query?.head !== undefined) return { kind: 'head', count: query.head };
  if (query?.offset !== undefined || query?.limit !== undefined) {
    return { kind: 'range', offset: query.offset ?? 1, limit: query.limit ?? DEFAULT_RANGE_LIMIT };
  }
  return { kind: 'tail', count: defaultTail };
}

/** The line numbers `selection` covers in a stream of `total` lines. */
export function windowOf(selection: LogSelection, total: number): LineWindow {
  switch (selection.kind) {
    case 'tail':
      return { from: Math.max(1, total - selection.count + 1), to: total };
    case 'head':
      return { from: 1, to: Math.min(total, selection.count) };
    case 'range':
      return { from: selection.offset, to: Math.min(total, selection.offset + selection.limit - 1) };
  }
}

/** Lines in a window (0 when empty). */
export function windowSize(window: LineWindow): number {
  return Math.max(0, window.to - window.from + 1);
}

/** `hasMore` of dagu-model §6 for `returned` lines of a stream of `total`. */
export function hasMoreOf(selection: LogSelection, total: number, returned: number): boolean {
  if (selection.kind === 'range') return selection.offset + returned - 1 < total;
  return returned < total;
}
