import type { DagListIfChangedReply, DagListReply, DagListRequest } from '@dagu-mcp/contracts';
import { deepFreeze } from '../../shared-result';

/** Default cap of pages a gateway replica keeps; the least recently used goes first. */
export const DAG_PAGE_MEMO_MAX_ENTRIES = 256;

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
 * may change it. The memo is per replica and keyed by the whole query; it
 * holds no principal's data (a page is the same for every reader).
 */
export class DagPageMemo {
  private readonly pages = new Map<string, { etag: string; page: DagListReply }>();
  private hits = 0;
  private misses = 0;

  /** @param maxEntries pages kept at most (default {@link DAG_PAGE_MEMO_MAX_ENTRIES}) */
  constructor(private readonly maxEntries = DAG_PAGE_MEMO_MAX_ENTRIES) {}

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
    this.pages.delete(key);
    if (this.pages.size >= this.maxEntries) {
      const oldest = this.pages.keys().next().value;
      if (oldest !== undefined) this.pages.delete(oldest);
    }
    this.pages.set(key, { etag: reply.etag, page });
    return page;
  }

  /** Reads answered from a held copy, reads that brought a page, and pages held. */
  stats(): { hits: number; misses: number; entries: number } {
    return { hits: this.hits, misses: this.misses, entries: this.pages.size };
  }
}
