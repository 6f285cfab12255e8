/**
 * Parses a `RUN_STEP_UID_RANGE` value `first-last` (decimal uids, e.g.
 * `200000-265535`; one uid alone is `n-n`).
 *
 * @returns the bounds, inclusive
 * @throws Error on another shape, uid 0, `last < first` or a uid above 4294967294
 */
export function parseUidRange(text: string): { first: number; last: number } {
  const match = /^\s*(\d{1,10})\s*-\s*(\d{1,10})\s*$/.exec(text);
  if (match === null) throw new Error('must be first-last, e.g. 200000-265535');
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1) throw new Error('must not hold uid 0 (root)');
  if (last < first) throw new Error('last uid is below the first');
  if (last > 4294967294) throw new Error('uids end at 4294967294');
  return { first, last };
}
