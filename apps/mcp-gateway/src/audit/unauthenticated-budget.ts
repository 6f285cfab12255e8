/**
 * A per-replica budget of audit rows from unauthenticated traffic (audit rows from unauthenticated
 * traffic, rate-limited with retention). Anyone who reaches the port can
 * send requests without a credential; each refused one is an audit row, so
 * without a budget a flood of them fills the audit table.
 *
 * At most `perMinute` such rows are admitted per minute (fixed windows); the
 * rest are counted, and the count is written as one summary row.
 */
export class UnauthenticatedBudget {
  private windowStart = 0;
  private admitted = 0;
  private dropped = 0;

  constructor(private readonly perMinute: number) {}

  /** True when one more row fits the current window (`now` in ms since the epoch). */
  admit(now: number): boolean {
    if (now - this.windowStart >= 60_000) {
      this.windowStart = now;
      this.admitted = 0;
    }
    if (this.admitted < this.perMinute) {
      this.admitted += 1;
      return true;
    }
    this.dropped += 1;
    return false;
  }

  /** The rows refused since the last call, and resets the count. */
  takeDropped(): number {
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped;
  }
}
