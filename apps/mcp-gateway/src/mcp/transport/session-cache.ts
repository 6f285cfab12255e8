import type { SessionRecord } from './session-record';

/**
 * A replica-local memo of recently loaded session records, so a client
 * sending many requests on one session does not cost a Redis round trip
 * (and a Lua run) per request (docs/mcp-transport.md "Session cache").
 *
 * - An entry is served for `freshMs` after the Redis load that produced it;
 *   the load refreshed the session's idle TTL, so within that window the
 *   session cannot have expired (`freshMs` is capped at a quarter of the idle
 *   TTL by the store). The next request after the window loads (and touches)
 *   again.
 * - Ending a session (DELETE, on any replica) and `logging/setLevel` drop the
 *   entry on every replica (the replica hub's control channel); until that
 *   message arrives — a pub/sub hop, well under a millisecond on one Redis —
 *   another replica may still serve the old record.
 * - At most `maxEntries` records (oldest first out), so the memo stays small
 *   however many sessions exist.
 */
export class SessionCache {
  private readonly entries = new Map<string, { readonly record: SessionRecord; readonly at: number }>();
  /** Bumped by every {@link SessionCache.forget}; a load that saw another epoch does not store its record. */
  private epochValue = 0;

  /**
   * @param freshMs - how long a loaded record is served without Redis, ms; 0 turns the cache off.
   * @param maxEntries - cap on cached records (default 10,000).
   * @param now - clock, ms since the epoch (default `Date.now`; injectable for tests).
   */
  constructor(
    readonly freshMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached record of `id` when fresh and bound to `principalId`; otherwise `undefined` (ask Redis). */
  get(id: string, principalId: string): SessionRecord | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    if (this.now() - entry.at >= this.freshMs) {
      this.entries.delete(id);
      return undefined;
    }
    return entry.record.principalId === principalId ? entry.record : undefined;
  }

  /** The current invalidation epoch; read it before a Redis load and pass it to {@link SessionCache.set}. */
  get epoch(): number {
    return this.epochValue;
  }

  /**
   * Remembers a record just loaded from Redis — unless a session was
   * forgotten since `epoch` was read (the load may have raced a DELETE or a
   * change and read the old record).
   */
  set(record: SessionRecord, epoch: number): void {
    if (this.freshMs <= 0 || epoch !== this.epochValue) return;
    this.entries.delete(record.id);
    this.entries.set(record.id, { record, at: this.now() });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /** Drops the record of `id` (the session ended or changed). */
  forget(id: string): void {
    this.epochValue += 1;
    this.entries.delete(id);
  }

  /** How many records are held. */
  get size(): number {
    return this.entries.size;
  }
}
