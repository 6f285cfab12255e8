import { closeRedisConnection, openRedisConnection, reconnectDelayMs, type BusLogger } from '@dagu-mcp/bus';
import { Redis } from 'ioredis';
import type { DagSpecCache } from './dag-spec-cache';

/**
 * DAG change announcements over Redis pub/sub on `<BUS_PREFIX>:dag:changed`;
 * the message is the DAG name. Every dag-service replica publishes the name
 * of each DAG it changed (after the commit, before its reply); every holder
 * of a {@link DagSpecCache} (dag-service replicas, and run-service, which
 * starts stored DAGs by name) drops the names it receives. While the
 * subscription is not active the cache is bypassed, since messages sent
 * meanwhile are lost. docs/decisions.md "DAG spec cache" has the argument.
 */

/** Longest wait for a PUBLISH, in ms; past it the change is logged as not announced. */
const PUBLISH_TIMEOUT_MS = 1000;

/** Wait before subscribing again after a SUBSCRIBE failed on a ready connection, in ms. */
const SUBSCRIBE_RETRY_MS = 1000;

/** The change channel of a bus prefix: `<prefix>:dag:changed`. */
export function dagChangedChannel(prefix: string): string {
  return `${prefix}:dag:changed`;
}

/** Options of {@link DagChangeChannel}. */
export interface DagChangeChannelOptions {
  /** `redis://[user:pass@]host:port[/db]`: the bus Redis (`REDIS_URL`). */
  readonly redisUrl: string;
  /** The bus key prefix (`BUS_PREFIX`). */
  readonly prefix: string;
  /** This replica's id: part of the connection names (`<prefix>:dag-changes:sub:<replica>`), for `CLIENT LIST`. */
  readonly replica: string;
  /** Receives the invalidations and is live only while subscribed; absent: publish only (cache disabled here). */
  readonly cache?: DagSpecCache | undefined;
  /** Whether this holder announces changes (default `true`: a dag-service replica); `false` listens only (run-service), no publisher connection. */
  readonly publishes?: boolean;
  /** pino or any logger with its `debug`/`info`/`warn`/`error` signatures. */
  readonly logger: BusLogger;
}

/** A publisher and a subscriber connection, each when needed; both reconnect by themselves. */
export class DagChangeChannel {
  private readonly channel: string;
  private readonly publisher: Redis | undefined;
  private readonly subscriber: Redis | undefined;
  /** Bumped on every connect and disconnect, so a subscribe answered on an older connection goes unheeded. */
  private generation = 0;
  private closed = false;

  constructor(private readonly options: DagChangeChannelOptions) {
    this.channel = dagChangedChannel(options.prefix);
    if (options.publishes !== false) {
      this.publisher = new Redis(options.redisUrl, {
        retryStrategy: (attempt: number) => reconnectDelayMs(attempt),
        connectTimeout: 5000,
        connectionName: `${options.prefix}:dag-changes:pub:${options.replica}`,
        maxRetriesPerRequest: 1,
        commandTimeout: PUBLISH_TIMEOUT_MS,
      });
      this.publisher.on('error', (error: Error) =>
        options.logger.debug({ err: error.message }, 'dag changes: publisher error'),
      );
    }
    const cache = options.cache;
    if (cache === undefined) return;
    cache.setLive(false);
    this.subscriber = openRedisConnection(
      options.redisUrl,
      'subscriber',
      `${options.prefix}:dag-changes:sub:${options.replica}`,
      options.logger,
    );
    this.subscriber.on('message', (channel: string, name: string) => {
      if (channel === this.channel) cache.invalidate(name);
    });
    for (const event of ['close', 'end', 'reconnecting']) this.subscriber.on(event, () => this.goDown(cache));
    this.subscriber.on('ready', () => void this.subscribe(cache));
  }

  /**
   * Announces that DAG `name` changed (call after the commit, before the
   * reply). A failed PUBLISH does not reject: it leaves the write done and
   * is logged; other replicas may then serve the old spec until their TTL
   * ends.
   * @throws Error only when the channel was built with `publishes: false` (a programming error).
   */
  async publish(name: string): Promise<void> {
    if (this.publisher === undefined) throw new Error('this DAG change channel only listens');
    try {
      await this.publisher.publish(this.channel, name);
    } catch (error) {
      this.options.logger.warn(
        { dag: name, err: error instanceof Error ? error.message : String(error) },
        'dag changes: change not announced',
      );
    }
  }

  /** Closes both connections; the cache stays bypassed. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [this.publisher, this.subscriber].map((redis) =>
        redis === undefined ? Promise.resolve() : closeRedisConnection(redis),
      ),
    );
  }

  private goDown(cache: DagSpecCache): void {
    this.generation += 1;
    if (cache.enabled && !this.closed)
      this.options.logger.warn({ channel: this.channel }, 'dag changes: subscription lost, spec cache bypassed');
    cache.setLive(false);
  }

  private async subscribe(cache: DagSpecCache): Promise<void> {
    const subscriber = this.subscriber;
    if (subscriber === undefined || this.closed) return;
    this.generation += 1;
    const generation = this.generation;
    try {
      await subscriber.subscribe(this.channel);
    } catch (error) {
      this.options.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'dag changes: subscribe failed',
      );
      // Still the same connection: try again (a reconnect subscribes by itself).
      const retry = setTimeout(() => {
        if (generation === this.generation && subscriber.status === 'ready') void this.subscribe(cache);
      }, SUBSCRIBE_RETRY_MS);
      retry.unref();
      return;
    }
    if (generation !== this.generation || this.closed || subscriber.status !== 'ready') return;
    cache.setLive(true);
    this.options.logger.debug({ channel: this.channel }, 'dag changes: subscribed, spec cache live');
  }
}
