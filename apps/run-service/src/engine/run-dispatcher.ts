import { withTransaction, type Logger, type Pool } from '@dagu-mcp/runtime';
import { claimQueuedRuns, hasQueuedRuns, type ClaimedRun } from '../store/run-ownership.repository';
import type { QueueLimits } from '../config/queue-limits';

/**
 * Starts queued runs (036 enqueue: status 5 `queued` until a slot frees).
 * Every replica runs one dispatcher; a claim happens under a database-wide
 * advisory lock, so the limits hold over all replicas: at most the queue's
 * limit (`RUN_QUEUES`, else `RUN_QUEUE_CONCURRENCY`) of active runs per queue
 * (`default`, or the DAG's `queue` / the request's `queue`) and at most `max_active_runs` per DAG.
 * The replica that claims a run owns and executes it.
 *
 * A claim pass runs when poked (a run was enqueued or ended on this replica)
 * and every `pollMs` (a slot freed on another replica).
 */
export class RunDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastRefusal: string | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly options: {
      owner: string;
      /** Concurrency of each queue. */
      queues: QueueLimits;
      pollMs: number;
      logger: Logger;
      /** Starts the claimed runs (already `running` and owned in PostgreSQL). */
      onClaimed: (runs: ClaimedRun[]) => Promise<void>;
      /**
       * Whether this replica may take queued runs now; when it says no (with the reason), they stay
       * queued for a later pass or another replica (too little free disk). Default: always.
       */
      mayClaim?: () => Promise<string | undefined>;
    },
  ) {}

  /** Starts polling. */
  start(): void {
    this.timer = setInterval(() => this.poke(), this.options.pollMs);
    this.timer.unref();
    this.poke();
  }

  /** Asks for a claim pass now (coalesced with one in flight). */
  poke(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.poke();
      }
    });
  }

  /** Stops claiming; resolves when the pass in flight ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
  }

  private async pass(): Promise<void> {
    try {
      // Nothing queued (the common pass, after a run ended): no locked claim transaction.
      if (!(await hasQueuedRuns(this.pool))) return;
      const refusal = await this.options.mayClaim?.();
      if (refusal !== undefined) {
        if (refusal !== this.lastRefusal) this.options.logger.warn({ reason: refusal }, 'queued runs left queued');
        this.lastRefusal = refusal;
        return;
      }
      this.lastRefusal = undefined;
      const claimed = await withTransaction(this.pool, (client) =>
        claimQueuedRuns(client, this.options.owner, this.options.queues),
      );
      if (claimed.length > 0) await this.options.onClaimed(claimed);
    } catch (error) {
      this.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'queue claim failed');
    }
  }
}
