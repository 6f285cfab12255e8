import type { Redis } from 'ioredis';

/** How long a drop waits for every replica to say it has dropped, ms. */
const ACK_WAIT_MS = 2_000;

/**
 * Tells every gateway replica to drop a cached entry, and waits until each
 * has done so: a drop is published on `channel`, every subscriber (this
 * replica's too) calls `onDrop` and answers with the same message on
 * `<channel>:ack`, and {@link ReplicaDrops.publish} resolves once as many
 * answers arrived as PUBLISH reported receivers, or after {@link ACK_WAIT_MS}.
 * So a 204 of a revocation means the credential is refused on every replica
 * that is alive. A replica that is gone answers nobody;
 * when its subscriber reconnects (it may have missed drops) `onReset` runs.
 *
 * {@link ReplicaDrops.generation} grows with every drop and reset: a cache
 * that starts a database lookup notes it and stores the result only when it
 * did not change, since the row may predate the drop.
 */
export class ReplicaDrops {
  private generationCount = 0;
  /** Publishes of this replica waiting for acks, by message. */
  private readonly waiting = new Map<string, Set<() => void>>();

  /**
   * @param deps.publisher a normal connection (PUBLISH)
   * @param deps.subscriber a connection in subscriber mode; may be shared by several instances
   * @param deps.channel e.g. `dagu:apikeys:revoked`
   * @param deps.onDrop drops what `message` names from the local cache
   * @param deps.onReset drops the whole local cache
   */
  constructor(
    private readonly deps: {
      publisher: Redis;
      subscriber: Redis;
      channel: string;
      onDrop: (message: string) => void;
      onReset: () => void;
    },
  ) {}

  /** Grows with every drop and reset seen by this replica. */
  get generation(): number {
    return this.generationCount;
  }

  /** Subscribes to drops and acks; call once at start. */
  async start(): Promise<void> {
    const { channel, subscriber, publisher } = this.deps;
    const ackChannel = `${channel}:ack`;
    subscriber.on('message', (from: string, message: string) => {
      if (from === channel) {
        this.dropHere(message);
        publisher.publish(ackChannel, message).catch(() => undefined);
      } else if (from === ackChannel) {
        for (const ack of this.waiting.get(message) ?? []) ack();
      }
    });
    subscriber.on('ready', () => {
      this.generationCount += 1;
      this.deps.onReset();
      void subscriber.subscribe(channel, ackChannel).catch(() => undefined);
    });
    await subscriber.subscribe(channel, ackChannel);
  }

  /**
   * Drops `message` here, then on every replica; resolves when each
   * subscriber has acknowledged or after {@link ACK_WAIT_MS}.
   * Throws when Redis refuses the PUBLISH.
   */
  async publish(message: string): Promise<void> {
    this.dropHere(message);
    let acks = 0;
    let wanted = Number.POSITIVE_INFINITY;
    let done: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (done = resolve));
    const ack = (): void => {
      acks += 1;
      if (acks >= wanted) done();
    };
    const waiters = this.waiting.get(message) ?? new Set<() => void>();
    waiters.add(ack);
    this.waiting.set(message, waiters);
    const timer = setTimeout(done, ACK_WAIT_MS);
    try {
      wanted = await this.deps.publisher.publish(this.deps.channel, message);
      if (acks >= wanted) done();
      await settled;
    } finally {
      clearTimeout(timer);
      waiters.delete(ack);
      if (waiters.size === 0) this.waiting.delete(message);
    }
  }

  private dropHere(message: string): void {
    this.generationCount += 1;
    this.deps.onDrop(message);
  }
}
