import type { RunEvent, StepEvent } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import { findRootByName } from '../store/run-links.repository';
import type { Queryable } from '../store/run-rows';
import type { RunEventPublisher } from './run-event-publisher';

/**
 * Every event of a child run carries `root` (contracts `RunEventSchema`; the
 * gateway addresses a child as `dagu://runs/{root}/{rootId}/sub/{childId}`,
 * dagu-model §5, §8 subscriptions). Events are published from many places
 * (engine, decisions, stop, recovery) that only know the run's own name and
 * id, so this decorator adds `root` to any event published without one: it
 * looks the run up once (`runs.root_pk`) and caches the answer — a run's
 * root never changes, and a root run stays a root run.
 */

/** Entries kept before the cache is cleared (a bounded memory cost). */
export const ROOT_CACHE_SIZE = 10_000;

type Root = { name: string; dagRunId: string } | null;

/** {@link RunEventPublisher} that adds `root` to the events of child runs, then delegates. */
export class RootTaggingPublisher implements RunEventPublisher {
  private readonly roots = new Map<string, Root>();

  /**
   * @param inner  the publisher that sends the events (Redis in production)
   * @param db     where `runs` lives
   * @param logger warns when the lookup fails (the event is then sent without `root`)
   */
  constructor(
    private readonly inner: RunEventPublisher,
    private readonly db: Queryable,
    private readonly logger?: Logger,
  ) {}

  async publish(event: RunEvent): Promise<void> {
    if (event.root !== undefined) return this.inner.publish(event);
    const root = await this.rootOf(event.name, event.dagRunId);
    return this.inner.publish(root === null ? event : { ...event, root });
  }

  /** Step events go out as they are: the console follows a child run by its own id. */
  publishSteps(events: readonly StepEvent[]): void {
    this.inner.publishSteps?.(events);
  }

  /** A run just created without a parent: cached as a root, saving the look-up its first event would make. */
  noteRootRun(dagName: string, dagRunId: string): void {
    this.remember(`${dagName}\u0000${dagRunId}`, null);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private remember(key: string, root: Root): void {
    if (this.roots.size >= ROOT_CACHE_SIZE) this.roots.clear();
    this.roots.set(key, root);
  }

  private async rootOf(name: string, dagRunId: string): Promise<Root> {
    const key = `${name}\u0000${dagRunId}`;
    const cached = this.roots.get(key);
    if (cached !== undefined) return cached;
    try {
      const root: Root = (await findRootByName(this.db, name, dagRunId)) ?? null;
      this.remember(key, root);
      return root;
    } catch (error) {
      this.logger?.warn(
        { err: error instanceof Error ? error.message : String(error), dagRunId },
        'run event: root lookup failed',
      );
      return null;
    }
  }
}
