import { AUDIT_QUEUE, OUTBOX_BATCH_JOB, OutboxBatchSchema, OutboxEntrySchema } from '@dagu-mcp/contracts';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { insertOutboxEntries } from './audit.repository';

/**
 * The gateway's end of the services' outbox drains (docs/decisions.md
 * "Attribution and mutation outcomes"): a BullMQ worker on the
 * {@link AUDIT_QUEUE} queue that writes each drained mutation row into
 * `audit_events`, once per `(source, sourceId)`. A job carries a whole drain
 * pass (`OUTBOX_BATCH_JOB`, written in one statement) or, from a service
 * older than the batch, one row. A failed insert (PostgreSQL down) fails the
 * job, and BullMQ tries it again with backoff; a malformed job is logged and
 * dropped. Every gateway replica consumes.
 */
export class AuditTrailConsumer {
  private readonly connection: Redis;
  private readonly worker: Worker;

  constructor(deps: { redisUrl: string; prefix: string; pool: Pool; logger: Logger }) {
    // BullMQ workers block on Redis: their connection must not give up on a request.
    this.connection = new Redis(deps.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (err: Error) => deps.logger.debug({ err: err.message }, 'audit consumer redis error'));
    this.worker = new Worker(
      AUDIT_QUEUE,
      async (job) => {
        const parsed =
          job.name === OUTBOX_BATCH_JOB
            ? OutboxBatchSchema.safeParse(job.data)
            : OutboxEntrySchema.transform((entry) => ({ entries: [entry] })).safeParse(job.data);
        if (!parsed.success) {
          deps.logger.error({ jobId: job.id }, 'audit outbox entry is malformed; dropped');
          return;
        }
        await insertOutboxEntries(deps.pool, parsed.data.entries);
      },
      { connection: this.connection, prefix: deps.prefix, concurrency: 4 },
    );
    this.worker.on('error', (err: Error) => deps.logger.warn({ err: err.message }, 'audit consumer error'));
    this.worker.on('failed', (job, err) =>
      deps.logger.warn({ jobId: job?.id, err: err.message }, 'audit outbox entry not stored yet; retried'),
    );
  }

  /** Stops taking entries (the one in flight finishes) and closes the connection. */
  async close(): Promise<void> {
    await this.worker.close();
    this.connection.disconnect();
  }
}
