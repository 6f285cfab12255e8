import type { Logger, Pool } from '@dagu-mcp/runtime';
import { retryWhileUnavailable } from './outage-retry';
import {
  saveBodySteps,
  saveItems,
  type BodyStepState,
  type ForeachAddress,
  type ItemState,
} from './foreach.repository';

/**
 * Write-behind persistence of one foreach step's item and body-step states
 * (the foreach counterpart of `node-state-writer.ts`). `saveItem` and
 * `saveBodyStep` never wait: they record the latest state per item (per item
 * and body step) and a background loop writes every changed row, items in one
 * `UPDATE … FROM unnest(…)` and body steps in another, one batch at a time.
 * A row saved several times before the loop gets to it is written once, with
 * its latest state (each state is whole, so the latest one is all that
 * matters). Before: a 500-item foreach made 2,000 single-row UPDATEs, each a
 * commit of its own; now a batch holds whatever piled up while the previous
 * one was written.
 *
 * While PostgreSQL is unavailable a batch is retried
 * (`outage-retry.ts`, up to `outageMaxMs`), rows saved meanwhile waiting
 * behind it; a batch that still fails is logged and dropped, never thrown.
 * {@link ForeachStateWriter.flush} resolves once everything saved so far was
 * written or dropped: the foreach step ends only after it.
 */
export class ForeachStateWriter {
  private items = new Map<string, ItemState>();
  private steps = new Map<string, { path: string; seq: number; state: BodyStepState }>();
  private loop: Promise<void> | undefined;

  /**
   * @param deps.outageMaxMs how long a batch is retried while PostgreSQL is unavailable, in ms
   */
  constructor(
    private readonly deps: { pool: Pool; logger: Logger; outageMaxMs: number },
    private readonly at: ForeachAddress,
  ) {}

  /** Records item `path`'s state (written soon). */
  saveItem(path: string, state: ItemState): void {
    this.items.set(path, state);
    this.kick();
  }

  /** Records the state of body step `seq` of item `path` (written soon). */
  saveBodyStep(path: string, seq: number, state: BodyStepState): void {
    this.steps.set(`${path}#${seq}`, { path, seq, state });
    this.kick();
  }

  /** Resolves once every state saved so far is written (or failed and was logged). */
  async flush(): Promise<void> {
    while (this.loop !== undefined || this.items.size > 0 || this.steps.size > 0) {
      if (this.loop !== undefined) await this.loop;
      else this.kick();
    }
  }

  private kick(): void {
    if (this.loop === undefined) this.loop = this.drain().finally(() => (this.loop = undefined));
  }

  private async drain(): Promise<void> {
    // Let the saves of this tick pile up first.
    await Promise.resolve();
    while (this.items.size > 0 || this.steps.size > 0) {
      const items = [...this.items].map(([path, state]) => ({ path, state }));
      const steps = [...this.steps.values()];
      this.items = new Map();
      this.steps = new Map();
      try {
        await retryWhileUnavailable(
          async () => {
            await saveBodySteps(this.deps.pool, this.at, steps);
            await saveItems(this.deps.pool, this.at, items);
          },
          { maxMs: this.deps.outageMaxMs, logger: this.deps.logger, what: 'foreach state' },
        );
      } catch (error) {
        this.deps.logger.error(
          { err: error instanceof Error ? error.message : String(error) },
          'foreach state write failed',
        );
      }
    }
  }
}
