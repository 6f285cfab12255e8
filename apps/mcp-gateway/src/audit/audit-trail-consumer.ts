import {
  AUDIT_BATCH_QUEUE,
  AUDIT_QUEUE,
  OutboxBatchSchema,
  OutboxEntrySchema,
  type OutboxEntry,
} from '@dagu-mcp/contracts';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import { type Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { insertOutboxEntries } from './audit.repository';

/**
 * The gateway's end of the services' outbox drains (docs/decisions.md
 * "Attribution and mutation outcomes"): BullMQ workers that write each
 * drained mutation row into `audit_events`, once per `(source, sourceId)`.
 * A job of {@link AUDIT_BATCH_QUEUE} carries a whole drain pass, written in
 * one statement; a job of {@link AUDIT_QUEUE} one row (what services before
 * the batches send). A failed insert (PostgreSQL down) fails the job, and
 * BullMQ tries it again with backoff; a malformed entry is logged and
 * dropped, the rest of its batch stored. Every gateway replica consumes.
 */
export class AuditTrailConsumer {
  private readonly connection: Redis;
  private readonly workers: Worker[];

  constructor(deps: { redisUrl: string; prefix: string; pool: Pool; logger: Logger }) {
    // BullMQ workers block on Redis: their connection must not give up on a request.
    this.connection = new Redis(deps.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (err: Error) => deps.logger.debug({ err: err.message }, 'audit consumer redis error'));
    const store = async (job: Job, entries: unknown[]): Promise<void> => {
      const good: OutboxEntry[] = [];
      for (const entry of entries) {
        const parsed = OutboxEntrySchema.safeParse(entry);
        if (parsed.success) good.push(parsed.data);
        else deps.logger.error({ jobId: job.id }, 'audit outbox entry is malformed; dropped');
      }
      await insertOutboxEntries(deps.pool, good);
    };
    const options = { connection: this.connection, prefix: deps.prefix, concurrency: 4 };
    this.workers = [
      new Worker(AUDIT_QUEUE, (job) => store(job, [job.data]), options),
      new Worker(
        AUDIT_BATCH_QUEUE,
        async (job) => {
          const batch = OutboxBatchSchema.safeParse(job.data);
          if (!batch.success) {
            deps.logger.error({ jobId: job.id }, 'audit outbox batch is malformed; dropped');
            return;
          }
          await store(job, batch.data.entries);
        },
        options,
      ),
    ];
    for (const worker of this.workers) {
      worker.on('error', (err: Error) => deps.logger.warn({ err: err.message }, 'audit consumer error'));
      worker.on('failed', (job, err) =>
        deps.logger.warn({ jobId: job?.id, err: err.message }, 'audit outbox entries not stored yet; retried'),
      );
    }
  }

  /** Stops taking entries (the ones in flight finish) and closes the connection. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
    this.connection.disconnect();
  }
}
