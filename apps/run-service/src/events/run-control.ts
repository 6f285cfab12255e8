import type { Logger } from '@dagu-mcp/runtime';
import { Redis } from 'ioredis';
import { z } from 'zod';

/**
 * Stop requests between run-service replicas. The replica that handles
 * `run.stop` for a run another replica owns records the request in
 * PostgreSQL (`stop_requested_at`, picked up by the owner's heartbeat at the
 * latest) and publishes it here so the owner acts at once. Internal to
 * run-service: the channel is `<prefix>:run-service:control`.
 */

const ControlMessageSchema = z.object({ kind: z.literal('stop'), runPk: z.number().int() });

/** The control channel of a bus prefix. */
export function runControlChannel(prefix: string): string {
  return `${prefix}:run-service:control`;
}

/** Sends and receives stop requests. */
export class RunControlChannel {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;

  /** @param onStop called with the pk of a run some replica was asked to stop */
  constructor(
    redisUrl: string,
    prefix: string,
    onStop: (runPk: number) => void,
    private readonly logger?: Logger,
  ) {
    this.channel = runControlChannel(prefix);
    this.publisher = new Redis(redisUrl, { maxRetriesPerRequest: 2, connectionName: `${prefix}:run-control:pub` });
    this.subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName: `${prefix}:run-control:sub` });
    for (const redis of [this.publisher, this.subscriber]) {
      redis.on('error', (error: Error) => this.logger?.warn({ err: error.message }, 'run control: redis error'));
    }
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      try {
        const parsed = ControlMessageSchema.safeParse(JSON.parse(message));
        if (parsed.success) onStop(parsed.data.runPk);
      } catch {
        this.logger?.warn({ channel }, 'run control: unreadable message');
      }
    });
  }

  /** Subscribes; resolves once the subscription is active. */
  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  /** Asks every replica to stop run `runPk` (only its owner acts). */
  async requestStop(runPk: number): Promise<void> {
    try {
      await this.publisher.publish(this.channel, JSON.stringify({ kind: 'stop', runPk }));
    } catch (error) {
      this.logger?.warn(
        { err: error instanceof Error ? error.message : String(error), runPk },
        'run control: stop not published',
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      [this.publisher, this.subscriber].map(async (redis) => {
        try {
          await redis.quit();
        } catch {
          redis.disconnect();
        }
      }),
    );
  }
}
