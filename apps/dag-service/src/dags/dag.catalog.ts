import type {
  DagChangeRequest,
  DagDetail,
  DagListIfChangedReply,
  DagListIfChangedRequest,
  DagListReply,
  DagListRequest,
  DagRenameReply,
  DagSearchReply,
  DagSearchRequest,
  DagSpecReply,
  DagUpsertReply,
  DagValidation,
} from '@dagu-mcp/contracts';
import type { MutationAuthor, Pool } from '@dagu-mcp/runtime';
import { renameDag } from './dag-rename';
import type { DagRecord } from './dag.records';
import type { DagRepository } from './dag.repository';
import type { DagSpecCache } from '@dagu-mcp/service-kit';
import { pageTag, type DagListCache } from './dag-list-cache';
import { listDags } from './dag-list';
import { searchDagSpecs } from './dag-search';
import { assertValidDagName } from './dag-validation';
import { SpecParsers } from './spec-parsers';
import { toDagDetail, toDagSpecReply } from './dag.views';
import { dagNotFoundError } from './did-you-mean';
import { NextRunCalculator } from './next-run';

/** Entries kept by the spec-error cache (first in, first out). */
const SPEC_ERROR_CACHE_SIZE = 5000;

/** How the catalog caches `dag.spec` and announces changes (both optional: absent = no cache, no announcement). */
export interface DagChangeHooks {
  /** The per-replica `dag.spec` cache (dag-spec-cache.ts). */
  readonly specCache?: DagSpecCache | undefined;
  /** The per-replica `dag.list` page cache (dag-list-cache.ts); it follows `specCache`'s invalidations. */
  readonly listCache?: DagListCache | undefined;
  /**
   * Tells the other replicas that DAG `name` changed (service-kit dag-change-channel.ts);
   * awaited after each write commits and before the reply. Must not reject.
   */
  readonly announceChange?: ((name: string) => Promise<void>) | undefined;
}

/**
 * The DAG domain of dag-service: one method per op of `dagOps`, each
 * returning the op's reply model. Handlers are thin adapters over it.
 */
export class DagCatalog {
  private readonly specErrorCache = new Map<string, string[]>();

  /** Page queries under way, by `<epoch>:<page key>` ({@link DagCatalog.fetchPage}). */
  private readonly pageFetches = new Map<string, Promise<{ reply: DagListReply; etag: string }>>();

  /**
   * @param repository - the DAG store.
   * @param nextRuns - next-run calculator (cache shared by every request); default a new one.
   * @param clock - the current time, for next runs; default `new Date()`.
   * @param changes - the `dag.spec` cache and the change announcer; default none.
   * @param parsers - where specs are validated (in-thread when small, else a worker thread); default the
   *   defaults of spec-parsers.ts.
   */
  constructor(
    private readonly repository: DagRepository,
    private readonly nextRuns: NextRunCalculator = new NextRunCalculator(),
    private readonly clock: () => Date = () => new Date(),
    private readonly changes: DagChangeHooks = {},
    private readonly parsers: SpecParsers = new SpecParsers(),
  ) {}

  /**
   * `dag.validate` (spec 022 preview): `{valid, errors, dag?}`. Writes nothing.
   * An invalid spec also says whether a DAG of that name is stored (`stored`), so the
   * gateway links the stored spec only when there is one (issue "The first hour", item 13);
   * a valid one skips that read (the hot path of preview).
   *
   * @throws DaguError `invalid_tool_input` on `name` for a name that breaks dagu-model §2;
   *   `resource_unavailable` when PostgreSQL cannot say whether the DAG is stored.
   */
  async validate(request: DagChangeRequest): Promise<DagValidation> {
    const { validation } = await this.parsers.validate(request.name, request.spec);
    if (validation.valid) return validation;
    return { ...validation, stored: (await this.repository.get(request.name)) !== undefined };
  }

  /**
   * `dag.upsert` (spec 022 apply): validates, then creates or updates the DAG
   * in one atomic statement committed only before `deadline`.
   *
   * @param deadline - the request's deadline, epoch ms.
   * @param author - who asks (the bus handler context): recorded with the change in its transaction.
   * @returns invalid: `{valid: false, errors, applied: false}`, nothing
   *   written; valid: `{valid: true, errors: [], dag, applied: true, created,
   *   updated, version}`.
   * @throws DaguError `invalid_tool_input` on `name`; `resource_unavailable`
   *   when the deadline passes first or PostgreSQL is unavailable (nothing written).
   */
  async upsert(request: DagChangeRequest, deadline: number, author?: MutationAuthor): Promise<DagUpsertReply> {
    const { validation, write } = await this.parsers.validate(request.name, request.spec);
    if (write === undefined) {
      const stored = (await this.repository.get(request.name)) !== undefined;
      return { valid: false, errors: validation.errors, applied: false, stored };
    }
    const outcome = await this.changing(write.name, () => this.repository.upsert(write, deadline, author));
    return {
      ...validation,
      applied: true,
      created: outcome.created,
      updated: !outcome.created,
      version: outcome.version,
    };
  }

  /**
   * `dag.list` (spec 021 `dags`); see dag-list.ts for defaults and orders.
   * Pages sorted by name are served from the replica's page cache when it
   * holds them (dag-list-cache.ts).
   */
  async list(request: DagListRequest): Promise<DagListReply> {
    return (await this.page(request)).reply;
  }

  /**
   * `dag.listIfChanged` (spec 021 `dags`): the page's tag
   * ({@link pageTag}), and the page itself unless `ifNoneMatch` is that tag.
   * Same reads and cache as {@link DagCatalog.list}.
   */
  async listIfChanged(request: DagListIfChangedRequest): Promise<DagListIfChangedReply> {
    const { ifNoneMatch, ...query } = request;
    const { reply, etag = pageTag(reply) } = await this.page(query);
    return etag === ifNoneMatch ? { etag } : { etag, page: reply };
  }

  /**
   * A page from the replica's cache when it holds it, else from PostgreSQL
   * (then cached), with its tag when it comes from the cache. A page read often is fetched again in
   * the background shortly before its TTL ends (DagListCache.refreshDue),
   * and reads that miss together share one fetch ({@link DagCatalog.fetchPage}).
   */
  private async page(request: DagListRequest): Promise<{ reply: DagListReply; etag?: string }> {
    const cache = this.changes.listCache;
    // While the cache is off (or the change subscription is down) every read queries for itself:
    // no cached page, and no shared query, since changes made elsewhere may go unheard meanwhile.
    const key = cache?.live === true ? cache.keyOf(request) : undefined;
    if (cache === undefined || key === undefined)
      return { reply: await listDags(this.repository, this.nextRuns, request, this.clock()) };
    const cached = cache.get(key);
    if (cached === undefined) return this.fetchPage(cache, key, request);
    if (cache.refreshDue(key)) this.fetchPage(cache, key, request).catch(() => undefined);
    return cached;
  }

  /**
   * Queries a page and caches it, one query at a time per page and epoch:
   * a read that misses while a fetch of the same page runs, begun since the
   * last DAG change this replica knows of, waits for that fetch rather than
   * querying too. A fetch begun before a change this replica has heard of is
   * never joined; a change not yet announced here is not seen by a joiner,
   * exactly as it is not seen by a cache hit (docs/decisions.md "dag.spec
   * cache", read-your-writes across replicas). Only while the cache is live.
   */
  private fetchPage(
    cache: DagListCache,
    key: string,
    request: DagListRequest,
  ): Promise<{ reply: DagListReply; etag: string }> {
    // Read before the queries: a change announced while they run keeps their result out of the cache.
    const epoch = cache.epoch();
    const flightKey = `${epoch}:${key}`;
    const running = this.pageFetches.get(flightKey);
    if (running !== undefined) return running;
    const fetch = (async () => {
      const reply = await listDags(this.repository, this.nextRuns, request, this.clock());
      const etag = pageTag(reply);
      cache.store(key, reply, epoch, etag);
      return { reply, etag };
    })().finally(() => this.pageFetches.delete(flightKey));
    this.pageFetches.set(flightKey, fetch);
    return fetch;
  }

  /**
   * `dag.get` (spec 021 `dag`): the DAG detail model.
   *
   * @throws DaguError `resource_not_found` (`DAG "<name>" does not exist.`,
   *   `details.didYouMean` when names are close, spec 036), `invalid_tool_input`
   *   on `name`, `resource_unavailable`.
   */
  async get(name: string): Promise<DagDetail> {
    const record = await this.find(name);
    const nextRun = record.suspended ? undefined : this.nextRuns.nextRunOf(record.schedule, this.clock());
    return toDagDetail(record, nextRun);
  }

  /**
   * `dag.spec` (spec 021 `dag_spec`): the stored YAML and the errors that
   * validating it today reports. Served from the replica's cache when it
   * holds the name (dag-spec-cache.ts); a DAG that does not exist is never
   * cached.
   *
   * @throws as {@link DagCatalog.get}.
   */
  async spec(name: string): Promise<DagSpecReply> {
    assertValidDagName(name);
    const cache = this.changes.specCache;
    const cached = cache?.get(name);
    if (cached !== undefined) return cached;
    // Read before the query: a change announced while it runs keeps its result out of the cache.
    const epoch = cache?.epoch() ?? 0;
    const record = await this.find(name);
    const reply = toDagSpecReply(record, await this.specErrors(record));
    cache?.store(name, reply, epoch);
    return reply;
  }

  /** `dag.search` (spec 021 `dag_search`); see dag-search.ts. */
  search(request: DagSearchRequest): Promise<DagSearchReply> {
    return searchDagSpecs(this.repository, request);
  }

  /**
   * `dag.delete`: removes the DAG; its runs stay readable in run-service.
   * @throws as {@link DagCatalog.get}; `resource_unavailable` past the deadline (nothing deleted).
   */
  async delete(name: string, deadline: number, author?: MutationAuthor): Promise<{ name: string; deleted: true }> {
    assertValidDagName(name);
    if (!(await this.changing(name, () => this.repository.delete(name, deadline, author))))
      throw dagNotFoundError(name, await this.repository.listNames());
    return { name, deleted: true };
  }

  /**
   * `dag.rename` (Dagu spec 022b `rename_dag`): see dag-rename.ts. Both names
   * leave the spec cache and are announced.
   * @throws as {@link DagCatalog.get}; `conflict` on `newName` when it is taken.
   */
  async rename(
    pool: Pool,
    name: string,
    newName: string,
    deadline: number,
    author?: MutationAuthor,
  ): Promise<DagRenameReply> {
    assertValidDagName(name);
    assertValidDagName(newName);
    const reply = await this.changing(name, () =>
      this.changing(newName, () => renameDag(pool, name, newName, deadline, author)),
    );
    if (reply === undefined) throw dagNotFoundError(name, await this.repository.listNames());
    return reply;
  }

  /**
   * `dag.setSuspended`: suspends or resumes the DAG; replies with its detail model.
   * @throws as {@link DagCatalog.delete}.
   */
  async setSuspended(name: string, suspended: boolean, deadline: number, author?: MutationAuthor): Promise<DagDetail> {
    assertValidDagName(name);
    if (!(await this.changing(name, () => this.repository.setSuspended(name, suspended, deadline, author))))
      throw dagNotFoundError(name, await this.repository.listNames());
    return this.get(name);
  }

  /**
   * The validation errors of a stored spec, cached per DAG name and YAML text
   * (the same text always validates the same way); re-parsing on every
   * `dag_spec` read was the largest CPU cost of the hot read path (bench S2).
   */
  private async specErrors(record: DagRecord): Promise<string[]> {
    const key = `${record.name}\u0000${record.spec}`;
    const cached = this.specErrorCache.get(key);
    if (cached !== undefined) return cached;
    const errors = (await this.parsers.validate(record.name, record.spec)).validation.errors;
    if (this.specErrorCache.size >= SPEC_ERROR_CACHE_SIZE) {
      const oldest = this.specErrorCache.keys().next().value;
      if (oldest !== undefined) this.specErrorCache.delete(oldest);
    }
    this.specErrorCache.set(key, errors);
    return errors;
  }

  /**
   * Runs a write of DAG `name`, then drops its cached spec and announces the
   * change, before the caller replies. Also when the write fails: a failure
   * at COMMIT may still have committed, and a needless invalidation only
   * costs one query.
   */
  private async changing<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.changes.specCache?.invalidate(name);
      await this.changes.announceChange?.(name);
    }
  }

  /** The stored DAG, or the 036 not-found error with suggestions. */
  private async find(name: string): Promise<DagRecord> {
    assertValidDagName(name);
    const record = await this.repository.get(name);
    if (record !== undefined) return record;
    throw dagNotFoundError(name, await this.repository.listNames());
  }
}
