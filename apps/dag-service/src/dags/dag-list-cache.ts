import { createHash } from 'node:crypto';
import type { DagListReply, DagListRequest } from '@dagu-mcp/contracts';
import type { DagSpecCache } from '@dagu-mcp/service-kit';

/**
 * The per-replica cache of `dag.list` pages (spec 021 `dags`), so that
 * paging through the collection costs what a `dag_spec` read costs (issue
 * 28: a page of 50 of 10,000 DAGs ran a `count(*)` and a sorted page query,
 * 0.25× S1's throughput). docs/decisions.md "DAG list pages cached".
 *
 * It leans on the `dag.spec` cache's invalidation rather than keeping its
 * own: every entry is tagged with that cache's epoch when its query began
 * and is served only while the epoch is unchanged. Any DAG change (written
 * here or announced by another replica, service-kit dag-change-channel.ts) and any loss
 * or return of the change subscription bumps the epoch, so every page goes
 * at once: a change may move any DAG into or out of any page, and changes
 * are rare next to reads. The same TTL bounds rows written in SQL.
 *
 * A page is also dropped when the earliest `nextRun` it shows has passed (it
 * would show a time in the past). Pages sorted by `nextRun` are not cached:
 * their order moves whenever any matching DAG's next run passes.
 */
export class DagListCache {
  private readonly pages = new Map<string, CachedPage>();
  private hits = 0;
  private misses = 0;
  private stored = 0;

  /**
   * @param spec       the `dag.spec` cache whose epoch and switch this one follows
   * @param ttlMs      how long a page may be served, in ms (`DAG_SPEC_CACHE_MS`)
   * @param maxEntries pages kept at most (default 2,000; the oldest stored goes first)
   * @param now        the current time in ms (default `Date.now`)
   */
  constructor(
    private readonly spec: DagSpecCache,
    private readonly ttlMs: number,
    private readonly maxEntries = 2000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether pages are cached now: the cache is on and its change subscription up (the `dag.spec` cache's switch). */
  get live(): boolean {
    return this.spec.enabled;
  }

  /** The key of a request, or `undefined` when such a page is not cached (`sort=nextRun`). */
  keyOf(request: DagListRequest): string | undefined {
    if ((request.sort ?? 'name') !== 'name') return undefined;
    return JSON.stringify([request.page ?? 1, request.perPage, request.name, request.labels, request.order]);
  }

  /** The cached page for `key` and its tag ({@link pageTag}), if it is still valid. */
  get(key: string): { reply: DagListReply; etag: string } | undefined {
    const entry = this.getEntry(key);
    return entry === undefined ? undefined : { reply: entry.reply, etag: entry.etag };
  }

  /**
   * Whether the valid page under `key` should be fetched again now, ahead of
   * its end: it ends by the TTL (not at a next run) within the last fifth of
   * the TTL (at most 1 s). Refreshing a page that is read often before it
   * ends keeps its readers off PostgreSQL's slow path (S3's p99).
   */
  refreshDue(key: string): boolean {
    const entry = this.pages.get(key);
    if (entry === undefined || !entry.byTtl) return false;
    return this.now() >= entry.until - Math.min(this.ttlMs / 5, 1000);
  }

  private getEntry(key: string): CachedPage | undefined {
    const entry = this.spec.enabled ? this.pages.get(key) : undefined;
    if (entry !== undefined && entry.epoch === this.spec.epoch() && this.now() < entry.until) {
      this.hits += 1;
      return entry;
    }
    if (entry !== undefined) this.pages.delete(key);
    this.misses += 1;
    return undefined;
  }

  /** The epoch to read before querying; hand it to {@link DagListCache.store}. */
  epoch(): number {
    return this.spec.epoch();
  }

  /** Stores `reply` and its tag unless the cache is off or a change happened since `epoch` was read. */
  store(key: string, reply: DagListReply, epoch: number, etag: string): void {
    if (!this.spec.enabled || epoch !== this.spec.epoch()) return;
    const now = this.now();
    let until = now + this.ttlMs;
    let byTtl = true;
    for (const item of reply.items) {
      if (item.nextRun === undefined) continue;
      const at = Date.parse(item.nextRun);
      if (Number.isFinite(at) && at < until) [until, byTtl] = [at, false];
    }
    if (until <= now) return;
    this.pages.delete(key);
    if (this.pages.size >= this.maxEntries) {
      const oldest = this.pages.keys().next().value;
      if (oldest !== undefined) this.pages.delete(oldest);
    }
    this.pages.set(key, { reply, epoch, until, byTtl, etag });
    this.stored += 1;
  }

  /** Hits, misses and pages stored since it was built, and the pages held. */
  stats(): { hits: number; misses: number; stored: number; entries: number } {
    return { hits: this.hits, misses: this.misses, stored: this.stored, entries: this.pages.size };
  }
}

interface CachedPage {
  readonly reply: DagListReply;
  readonly epoch: number;
  readonly until: number;
  /** Whether `until` is the TTL's end (else the earliest next run shown). */
  readonly byTtl: boolean;
  /** {@link pageTag} of `reply`. */
  readonly etag: string;
}

/**
 * The tag of a `dag.list` page (`dag.listIfChanged`): a SHA-256 of
 * its JSON, base64url. Equal pages get equal tags on every replica, so a
 * caller's tag from one replica is checked by another.
 */
export function pageTag(reply: DagListReply): string {
  return createHash('sha256').update(JSON.stringify(reply)).digest('base64url');
}
