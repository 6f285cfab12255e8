import { AUDIT_BATCH_QUEUE, type OutboxBatch, type OutboxEntry } from '@dagu-mcp/contracts';
import {
  claimUndrained,
  markDrained,
  sweepMutationLog,
  withTransaction,
  type Logger,
  type Pool,
} from '@dagu-mcp/runtime';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

const BATCH = 200;
const SWEEP_EVERY_MS = 3_600_000;

/** What {@link OutboxDrain} works with. */
export interface OutboxDrainOptions {
  /** `dag`, `run` or `wiki`: the `source` of the audit entries. */
  readonly source: string;
  readonly pool: Pool;
  /**
   * A Redis connection of the drain's own that fails fast while Redis is down
   * (`enableOfflineQueue: false`): a drain must not hold its transaction open
   * waiting for a reconnect. It only adds jobs, so BullMQ's worker settings do not apply.
   */
  readonly redis: Redis;
  readonly prefix: string;
  /** Poll interval, ms (`AUDIT_DRAIN_MS`). */
  readonly intervalMs: number;
  /**
   * Actions whose rows another service must act on, by action: the queue
   * (under `prefix`) that gets a job per such row besides the audit job, in
   * the same at-least-once step (e.g. `dag.renamed` → `DAG_MOVES_QUEUE`,
   * Dagu spec 022b). Default none.
   */
  readonly routes?: Readonly<Record<string, string>> | undefined;
  readonly logger: Logger;
}

/**
 * Drains the service's mutation outbox (`mutation_log`, see
 * `@dagu-mcp/runtime` mutation-log.ts) to the gateway's audit trail, at least
 * once: every `intervalMs` it claims the undrained rows (`FOR UPDATE SKIP
 * LOCKED`, so replicas share the work), adds one BullMQ job carrying all of
 * them to the {@link AUDIT_BATCH_QUEUE} queue (one job per row cost
 * the gateway a job fetch and an insert per change; the job id is BullMQ's
 * own, so a pass sent again after a crash is never taken for an earlier one),
 * and marks them drained in the same transaction only after Redis accepted
 * the job. A
 * crash between the two leaves the rows undrained: they are sent again, and
 * the gateway inserts each `(source, id)` once. Drained rows are deleted
 * after the 24 h idempotency window (hourly sweep).
 */
export class OutboxDrain {
  private readonly queue: Queue;
  private readonly routeQueues = new Map<string, Queue>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private lastSweep = 0;
  private stopped = false;
  private failing = false;

  constructor(private readonly options: OutboxDrainOptions) {
    this.queue = new Queue(AUDIT_BATCH_QUEUE, { connection: options.redis, prefix: options.prefix });
    this.queue.on('error', (err: Error) => options.logger.debug({ err: err.message }, 'audit queue error'));
    for (const [action, name] of Object.entries(options.routes ?? {})) {
      const routed = new Queue(name, { connection: options.redis, prefix: options.prefix });
      routed.on('error', (err: Error) => options.logger.debug({ err: err.message, queue: name }, 'outbox queue error'));
      this.routeQueues.set(action, routed);
    }
  }

  /** Starts polling (no-op with `intervalMs` 0: the drain is off). */
  start(): void {
    if (this.options.intervalMs === 0) return;
    const tick = (): void => {
      this.running = this.drainOnce()
        .then(() => {
          if (this.failing) this.options.logger.info('audit outbox drain works again');
          this.failing = false;
        })
        .catch((err: unknown) => {
          // Once per outage, not every tick: the rows wait in the outbox meanwhile.
          if (!this.failing) this.options.logger.warn({ err }, 'audit outbox drain failed; retried every tick');
          this.failing = true;
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.intervalMs);
        });
    };
    this.timer = setTimeout(tick, this.options.intervalMs);
  }

  /**
   * Sends one batch of undrained rows.
   * @returns how many rows were sent.
   */
  async drainOnce(): Promise<number> {
    const sent = await withTransaction(this.options.pool, async (client) => {
      const entries = await claimUndrained(client, this.options.source, BATCH);
      if (entries.length === 0) return 0;
      // Routed jobs first: a row is marked drained only after every queue it goes to accepted it.
      for (const [action, routed] of this.routeQueues) {
        const jobs = entries.filter((entry) => entry.action === action).map((entry) => jobOf(entry));
        if (jobs.length > 0) await routed.addBulk(jobs);
      }
      await this.queue.add(this.options.source, { entries } satisfies OutboxBatch, JOB_OPTIONS);
      await markDrained(
        client,
        entries.map((entry) => entry.sourceId),
      );
      return entries.length;
    });
    if (Date.now() - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = Date.now();
      await sweepMutationLog(this.options.pool);
    }
    return sent;
  }

  /** Stops polling after the batch in flight; closes the queue. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
    await this.queue.close().catch(() => undefined);
    for (const routed of this.routeQueues.values()) await routed.close().catch(() => undefined);
  }
}

/** Retries with backoff while the consumer cannot store (PostgreSQL down); completed jobs are removed. */
const JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: 1000,
  attempts: 10,
  backoff: { type: 'exponential', delay: 500 },
} as const;

/** A routed row's job (one per row: its consumer acts on each change). */
function jobOf(entry: OutboxEntry) {
  return { name: entry.action, data: entry, opts: { ...JOB_OPTIONS, jobId: `${entry.source}-${entry.sourceId}` } };
}
