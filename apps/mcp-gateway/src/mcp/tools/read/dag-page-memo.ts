import type { DagListReply, DagListRequest } from '@dagu-mcp/contracts';
import type { DagPageCache, TaggedPageFetch } from '../../../actions/dag-reads.actions';
import { deepFreeze } from '../../transport/shared-result';

/**
 * Default cap of what a gateway replica's held pages weigh, in bytes (32 MiB;
 * about 500 pages of 50 DAGs). A page weighs {@link PAGE_WEIGHT_FACTOR} times
 * the length of its key and JSON: the page's objects, its rendered text, the
 * encoded answer and the URI the answer repeats. The oldest stored page goes
 * first.
 */
export const DAG_PAGE_MEMO_MAX_BYTES = 32 * 1024 * 1024;

/** How many copies of its JSON a held page keeps alive, roughly (see {@link DAG_PAGE_MEMO_MAX_BYTES}). */
const PAGE_WEIGHT_FACTOR = 4;

/** Queries with a longer key (a long `name` or many `labels`) are answered but never held. */
const MAX_KEY_LENGTH = 1024;

/**
 * The gateway's copies of `dagu_read dags` pages (Dagu spec 021 `dags`). dag-service stays the judge of freshness: every read still asks
 * it, with the tag of the copy held here (`dag.listIfChanged`), and only an
 * unchanged tag lets the copy be served. What the copy saves is the 15 KB
 * reply on the bus, its parse and schema check, and (since the copy keeps
 * its identity) the indented rendering and JSON encoding of the answer,
 * which read-tool.ts and json-body.ts keep per page object.
 *
 * Pages are deep-frozen: the same object answers many requests, so nothing
 * may change it. The memo is per replica, keyed by the whole query and
 * bounded by what its pages weigh ({@link DAG_PAGE_MEMO_MAX_BYTES}); it holds no principal's data (a page is
 * the same for every reader). The action `listDagsIfChanged` (actions/dag-reads.actions.ts) reads through it.
 */
export class DagPageMemo implements DagPageCache {
  private readonly pages = new Map<string, { etag: string; page: DagListReply; weight: number }>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  /** @param maxBytes what held pages may weigh in all, in bytes (default {@link DAG_PAGE_MEMO_MAX_BYTES}) */
  constructor(private readonly maxBytes = DAG_PAGE_MEMO_MAX_BYTES) {}

  /**
   * The page for `query`: the held copy when dag-service says its tag is
   * current, else the page dag-service sent (kept, frozen, for next time).
   *
   * @throws whatever `fetch` throws (nothing is kept then); an `Error` when
   *   dag-service answers "unchanged" for another tag than the one sent.
   */
  async read(query: DagListRequest, fetch: TaggedPageFetch): Promise<DagListReply> {
    const key = JSON.stringify([query.page, query.perPage, query.name, query.labels, query.sort, query.order]);
    const held = this.pages.get(key);
    const reply = await fetch(query, held?.etag);
    if (reply.page === undefined) {
      // dag-service confirmed the tag this read sent: the copy it was sent for is the page.
      if (held === undefined || held.etag !== reply.etag)
        throw new Error('dag.listIfChanged answered "unchanged" for a tag this read did not send.');
      this.hits += 1;
      return held.page;
    }
    this.misses += 1;
    this.drop(key);
    if (key.length > MAX_KEY_LENGTH) return reply.page;
    const weight = PAGE_WEIGHT_FACTOR * (key.length + JSON.stringify(reply.page).length);
    if (weight > this.maxBytes) return reply.page;
    const page = deepFreeze(reply.page);
    for (const oldest of this.pages.keys()) {
      if (this.bytes + weight <= this.maxBytes) break;
      this.drop(oldest);
    }
    this.pages.set(key, { etag: reply.etag, page, weight });
    this.bytes += weight;
    return page;
  }

  /** Reads answered from a held copy, reads that brought a page, and the pages held and what they weigh. */
  stats(): { hits: number; misses: number; entries: number; bytes: number } {
    return { hits: this.hits, misses: this.misses, entries: this.pages.size, bytes: this.bytes };
  }

  private drop(key: string): void {
    const held = this.pages.get(key);
    if (held === undefined) return;
    this.pages.delete(key);
    this.bytes -= held.weight;
  }
}
