import { DAG_MOVES_QUEUE, DagRenamedDetailsSchema, OutboxEntrySchema } from '@dagu-mcp/contracts';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { moveRunHistory } from '../store/run-move.repository';
import { withStorageErrors } from '../store/storage-errors';
import { dropDagProfile, moveDagProfile } from '../store/profile.repository';

/** The DAG name of a `dagu://dags/{name}/spec` audit target; undefined for anything else. */
function dagNameOfTarget(target: string | null): string | undefined {
  const match = target === null ? null : /^dagu:\/\/dags\/([^/]+)\/spec$/.exec(target);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
}

/**
 * run-service's end of a DAG rename (Dagu spec 022b `rename_dag`;
 * docs/decisions.md): a BullMQ worker on {@link DAG_MOVES_QUEUE},
 * fed by dag-service's outbox drain with each `dag.renamed` mutation row. It
 * moves the DAG's run history and its own runtime profile to the new name
 * (store/run-move.repository.ts), and drops a deleted DAG's own profile
 * (`dag.deleted` rows).
 * A job whose move fails (PostgreSQL down) fails and BullMQ tries it again
 * with backoff; a job held by a replica that died is taken again by the
 * stalled check of the next one; a malformed entry is logged and dropped.
 * The schedule needs no move: the scheduler reads schedules by name from
 * dag-service, where the rename already took effect.
 */
export class DagMoveConsumer {
  private readonly connection: Redis;
  private readonly worker: Worker;

  constructor(deps: { redisUrl: string; prefix: string; pool: Pool; logger: Logger }) {
    // BullMQ workers block on Redis: their connection must not give up on a request.
    this.connection = new Redis(deps.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (err: Error) => deps.logger.debug({ err: err.message }, 'dag moves redis error'));
    this.worker = new Worker(
      DAG_MOVES_QUEUE,
      async (job) => {
        const entry = OutboxEntrySchema.safeParse(job.data);
        if (entry.success && entry.data.action === 'dag.deleted') {
          const name = DagRenamedDetailsSchema.shape.from.safeParse(dagNameOfTarget(entry.data.target));
          if (name.success)
            await withStorageErrors(() => dropDagProfile(deps.pool, name.data, new Date(entry.data.at)));
          return;
        }
        const details = DagRenamedDetailsSchema.safeParse(entry.data?.details);
        if (!entry.success || !details.success) {
          deps.logger.error({ jobId: job.id }, 'dag move entry is malformed; dropped');
          return;
        }
        const { from, to } = details.data;
        const at = new Date(entry.data.at);
        const moved = await withStorageErrors(async () => {
          await moveDagProfile(deps.pool, from, to, at);
          return moveRunHistory(deps.pool, from, to, at);
        });
        deps.logger.info({ from, to, moved }, 'run history moved to the renamed DAG');
      },
      { connection: this.connection, prefix: deps.prefix, concurrency: 1 },
    );
    this.worker.on('error', (err: Error) => deps.logger.warn({ err: err.message }, 'dag moves consumer error'));
    this.worker.on('failed', (job, err) =>
      deps.logger.warn({ jobId: job?.id, err: err.message }, 'run history not moved yet; retried'),
    );
  }

  /** Stops taking moves (the one in flight finishes) and closes the connection. */
  async close(): Promise<void> {
    await this.worker.close();
    this.connection.disconnect();
  }
}
