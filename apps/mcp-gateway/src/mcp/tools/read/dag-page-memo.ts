import type { DagListIfChangedReply, DagListReply, DagListRequest } from '@dagu-mcp/contracts';
import { deepFreeze } from '../../shared-result';

/**
 * Default cap of DAG summaries held over all pages of a gateway replica (256
 * pages of 50): a held page of 50 costs about 100 KB with its rendered text
 * and encoded answer, so the memo stays near 25 MB. The oldest stored page
 * goes first.
 */
export const DAG_PAGE_MEMO_MAX_ITEMS = 12_800;

/** Asks dag-service for a page (`dag.listIfChanged`), passing the tag of the copy held, if any. */
export type TaggedPageFetch = (
  query: DagListRequest,
  ifNoneMatch: string | undefined,
) => Promise<DagListIfChangedReply>;

/**
 * The gateway's copies of `dagu_read dags` pages (Dagu spec 021 `dags`,
 * issue 28). dag-service stays the judge of freshness: every read still asks
 * it, with the tag of the copy held here (`dag.listIfChanged`), and only an
 * unchanged tag lets the copy be served. What the copy saves is the 15 KB
 * reply on the bus, its parse and schema check, and (since the copy keeps
 * its identity) the indented rendering and JSON encoding of the answer,
 * which read-tool.ts and json-body.ts keep per page object.
 *
 * Pages are deep-frozen: the same object answers many requests, so nothing
 * may change it. The memo is per replica, keyed by the whole query and
 * bounded by the summaries it holds; it holds no principal's data (a page is
 * the same for every reader).
 */
export class DagPageMemo {
  private readonly pages = new Map<string, { etag: string; page: DagListReply }>();
  private items = 0;
  private hits = 0;
  private misses = 0;

  /** @param maxItems DAG summaries kept at most over all pages (default {@link DAG_PAGE_MEMO_MAX_ITEMS}) */
  constructor(private readonly maxItems = DAG_PAGE_MEMO_MAX_ITEMS) {}

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
    const page = deepFreeze(reply.page);
    this.drop(key);
    // A page counts at least one item, so the empty pages held stay bounded too.
    const weight = Math.max(1, page.items.length);
    if (weight > this.maxItems) return page;
    for (const oldest of this.pages.keys()) {
      if (this.items + weight <= this.maxItems) break;
      this.drop(oldest);
    }
    this.pages.set(key, { etag: reply.etag, page });
    this.items += weight;
    return page;
  }

  /** Reads answered from a held copy, reads that brought a page, and pages and summaries held. */
  stats(): { hits: number; misses: number; entries: number; items: number } {
    return { hits: this.hits, misses: this.misses, entries: this.pages.size, items: this.items };
  }

  private drop(key: string): void {
    const held = this.pages.get(key);
    if (held === undefined) return;
    this.pages.delete(key);
    this.items -= Math.max(1, held.page.items.length);
  }
}
