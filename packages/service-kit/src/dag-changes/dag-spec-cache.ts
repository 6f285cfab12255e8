import type { DagSpecReply } from '@dagu-mcp/contracts';

/**
 * The per-replica cache of `dag.spec` replies (spec 021 `dag_spec`, the hot
 * read behind `dagu_read dag_spec`, `dagu://dags/{name}/spec`, and every
 * start of a stored DAG), so that repeated reads skip PostgreSQL (in
 * dag-service) or the bus call to dag-service (in run-service). Kept correct
 * across replicas and services by invalidation (dag-change-channel.ts);
 * docs/decisions.md "DAG spec cache" has the whole argument. Pure and
 * synchronous: no I/O here.
 *
 * Three guards keep a stale entry out:
 * - every DAG change drops the name ({@link DagSpecCache.invalidate}), on the
 *   writing replica at once and on every other one when the change message
 *   arrives;
 * - a read stores its result only when no invalidation happened since it
 *   began ({@link DagSpecCache.epoch} before the query, passed to
 *   {@link DagSpecCache.store}), so a read that fetched the old row before a
 *   write cannot put it back after the write's invalidation;
 * - while the change subscription is down (messages may be lost) the cache
 *   is empty and bypassed ({@link DagSpecCache.setLive}).
 * The TTL bounds what none of them sees: rows written directly in SQL.
 */

/** Default cap of entries; the oldest stored is dropped first. */
export const DAG_SPEC_CACHE_MAX_ENTRIES = 10_000;

/** Default cap of the YAML held, in UTF-8 bytes (64 MiB); the oldest stored is dropped first. */
export const DAG_SPEC_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** Options of {@link DagSpecCache}. */
export interface DagSpecCacheOptions {
  /** How long an entry may be served, in ms; 0 disables the cache (every lookup misses, nothing is stored). */
  readonly ttlMs: number;
  /** Entries at most (default {@link DAG_SPEC_CACHE_MAX_ENTRIES}); when full, the oldest stored goes. */
  readonly maxEntries?: number;
  /** UTF-8 bytes of YAML at most (default {@link DAG_SPEC_CACHE_MAX_BYTES}); past it the oldest stored go. A bigger spec is not stored. */
  readonly maxBytes?: number;
  /** The current time in ms (default `Date.now`); tests pass a fake clock. */
  readonly now?: () => number;
}

/** Counters of {@link DagSpecCache}, since it was built. */
export interface DagSpecCacheStats {
  /** Lookups answered from the cache. */
  readonly hits: number;
  /** Lookups that went to PostgreSQL (absent, expired, disabled or bypassed). */
  readonly misses: number;
  /** Entries held now. */
  readonly entries: number;
  /** UTF-8 bytes of the YAML held now. */
  readonly bytes: number;
  /** Whether the cache is in use (enabled and, with a change channel, subscribed). */
  readonly live: boolean;
  /** How often it was switched off (emptied) because the change subscription went down. */
  readonly outages: number;
}

interface Entry {
  readonly reply: DagSpecReply;
  /** UTF-8 bytes of `reply.spec`. */
  readonly bytes: number;
  /** When it was stored, ms on the cache's clock. */
  readonly at: number;
}

/** DAG name → its `dag.spec` reply and when it was stored. */
export class DagSpecCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private bytes = 0;
  private invalidations = 0;
  private live = true;
  private hits = 0;
  private misses = 0;
  private outages = 0;

  /** @throws RangeError when `ttlMs` is negative, or `maxEntries` or `maxBytes` is not a positive integer. */
  constructor(private readonly options: DagSpecCacheOptions) {
    if (!(options.ttlMs >= 0)) throw new RangeError('ttlMs must be 0 or more');
    this.maxEntries = options.maxEntries ?? DAG_SPEC_CACHE_MAX_ENTRIES;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1)
      throw new RangeError('maxEntries must be a positive integer');
    this.maxBytes = options.maxBytes ?? DAG_SPEC_CACHE_MAX_BYTES;
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < 1)
      throw new RangeError('maxBytes must be a positive integer');
    this.now = options.now ?? Date.now;
  }

  /** Whether entries may be stored and served: a positive TTL and not bypassed. */
  get enabled(): boolean {
    return this.options.ttlMs > 0 && this.live;
  }

  /** The cached reply of `name` when present and younger than the TTL; else `undefined` (a miss). */
  get(name: string): DagSpecReply | undefined {
    const entry = this.enabled ? this.entries.get(name) : undefined;
    if (entry !== undefined && this.now() - entry.at < this.options.ttlMs) {
      this.hits += 1;
      return entry.reply;
    }
    if (entry !== undefined) this.drop(name);
    this.misses += 1;
    return undefined;
  }

  /**
   * The invalidation epoch: read it before querying PostgreSQL and hand it
   * to {@link DagSpecCache.store} with the result. Global, not per name:
   * changes are rare, so a read that loses its store to another DAG's
   * change costs one more query, no more.
   */
  epoch(): number {
    return this.invalidations;
  }

  /**
   * Stores `reply` for `name` unless the cache is disabled or bypassed, or
   * an invalidation happened since `epoch` was read (the reply may predate
   * it). A stored name moves to the newest position.
   *
   * @returns whether it was stored.
   */
  store(name: string, reply: DagSpecReply, epoch: number): boolean {
    if (!this.enabled || epoch !== this.invalidations) return false;
    this.drop(name);
    const bytes = Buffer.byteLength(reply.spec);
    if (bytes > this.maxBytes) return false;
    // The oldest stored go first, until both caps leave room (a Map iterates in insertion order).
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < this.maxEntries && this.bytes + bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
    this.entries.set(name, { reply, bytes, at: this.now() });
    this.bytes += bytes;
    return true;
  }

  /** Drops `name` (a DAG changed: written here or announced by another replica) and bumps the epoch. */
  invalidate(name: string): void {
    this.invalidations += 1;
    this.drop(name);
  }

  private drop(name: string): void {
    const entry = this.entries.get(name);
    if (entry === undefined) return;
    this.entries.delete(name);
    this.bytes -= entry.bytes;
  }

  /**
   * Switches the cache on or off with the change subscription. Either way
   * everything is dropped and the epoch bumped: going down, changes may be
   * missed from now on; coming back, reads that started while down must not
   * store what they fetched.
   */
  setLive(live: boolean): void {
    if (this.live && !live) this.outages += 1;
    this.invalidations += 1;
    this.entries.clear();
    this.bytes = 0;
    this.live = live;
  }

  /** Hit and miss counters and the current size. */
  stats(): DagSpecCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      entries: this.entries.size,
      bytes: this.bytes,
      live: this.enabled,
      outages: this.outages,
    };
  }
}
