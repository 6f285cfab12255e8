import {
  type RunEvent,
  runEventsChannel,
  runStatusLabel,
  type StepEvent,
  stepEventsChannel,
} from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import { Redis } from 'ioredis';

/**
 * Publishes run status changes (contracts `RunEventSchema`) on
 * `runEventsChannel(prefix)`. The gateway relays them to `wait` (036) and
 * resource subscriptions (dagu-model §8). Callers publish only after the
 * status is committed in PostgreSQL, so a listener that reacts by reading the
 * run sees the new status. A failed publish is logged, not thrown: the
 * database stays the truth and waiters fall back to their timeout.
 */
export interface RunEventPublisher {
  publish(event: RunEvent): Promise<void>;
  /**
   * Publishes step events (contracts `StepEventSchema`) on
   * `stepEventsChannel(prefix)`, all in one round trip, without waiting: the
   * engine's step chain never waits on Redis. Optional: test fakes leave it out.
   */
  publishSteps?(events: readonly StepEvent[]): void;
  /**
   * Tells the publisher that run `dagName`/`dagRunId` is a root run (it was
   * just created without a parent), so its events need no root look-up.
   * Optional: only the root-tagging publisher uses it.
   */
  noteRootRun?(dagName: string, dagRunId: string): void;
  close(): Promise<void>;
}

/** The event of `run` reaching `status` at `at`. */
export function runEventOf(
  run: { dagName: string; dagRunId: string; attemptId?: string },
  status: number,
  at: Date = new Date(),
): RunEvent {
  return {
    name: run.dagName,
    dagRunId: run.dagRunId,
    ...(run.attemptId !== undefined ? { attemptId: run.attemptId } : {}),
    status,
    statusLabel: runStatusLabel(status),
    at: at.toISOString(),
  };
}

/** {@link RunEventPublisher} over one ioredis connection. */
export class RedisRunEventPublisher implements RunEventPublisher {
  private readonly redis: Redis;
  private readonly channel: string;
  private readonly stepChannel: string;

  /**
   * @param redisUrl `redis://host:port[/db]` of the bus
   * @param prefix   the bus prefix (`BUS_PREFIX`)
   */
  constructor(
    redisUrl: string,
    prefix: string,
    private readonly logger?: Logger,
  ) {
    this.channel = runEventsChannel(prefix);
    this.stepChannel = stepEventsChannel(prefix);
    this.redis = new Redis(redisUrl, {
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      connectionName: `${prefix}:run-events`,
    });
    this.redis.on('error', (error: Error) =>
      this.logger?.warn({ err: error.message }, 'run event publisher: redis error'),
    );
  }

  async publish(event: RunEvent): Promise<void> {
    try {
      await this.redis.publish(this.channel, JSON.stringify(event));
    } catch (error) {
      this.logger?.warn(
        { err: error instanceof Error ? error.message : String(error), dagRunId: event.dagRunId },
        'run event not published',
      );
    }
  }

  publishSteps(events: readonly StepEvent[]): void {
    if (events.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const event of events) pipeline.publish(this.stepChannel, JSON.stringify(event));
    pipeline
      .exec()
      .catch((error: unknown) =>
        this.logger?.debug(
          { err: error instanceof Error ? error.message : String(error), dagRunId: events[0]?.dagRunId },
          'step events not published',
        ),
      );
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
