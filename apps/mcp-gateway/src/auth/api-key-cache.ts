import { timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@dagu-mcp/runtime';
import { KEY_PREFIX_LENGTH, hashApiKey, type ApiKeyRecord } from './api-key.repository';
import { ReplicaDrops } from './replica-drops';

/** What {@link ApiKeyVerifier} needs of a stored key (API keys, agent keys). */
export interface VerifiableKey {
  readonly id: string;
  /** SHA-256 hex of the key. */
  readonly keyHash: string;
  readonly revoked: boolean;
  readonly expiresAt: string | null;
}

/** Where {@link ApiKeyVerifier} finds keys. */
export interface KeyLookup<R extends VerifiableKey> {
  findByPrefix(prefix: string): Promise<R | undefined>;
  touch(id: string): Promise<void>;
}

/** How long a cached key record is trusted without an invalidation, ms. */
const CACHE_TTL_MS = 5 * 60_000;
/** `last_used_at` is written at most this often per key, ms. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Verifies API keys without a database round trip on the hot path. Records
 * are cached per lookup prefix; a revocation drops the prefix on every
 * replica and returns once each has done so ({@link ReplicaDrops}). Expiry is
 * checked on every use from the cached `expiresAt`.
 */
export class ApiKeyVerifier<R extends VerifiableKey = ApiKeyRecord> {
  private readonly cache = new Map<string, { record: R | undefined; at: number }>();
  private readonly touched = new Map<string, number>();
  private readonly drops: ReplicaDrops;

  /**
   * @param channel Redis pub/sub channel of revocations, e.g. `dagu:apikeys:revoked`
   * @param prefixLength characters of the key that form its lookup prefix (default: API keys')
   */
  constructor(
    private readonly deps: {
      repository: KeyLookup<R>;
      prefixLength?: number;
      publisher: Redis;
      subscriber: Redis;
      channel: string;
      logger: Logger;
    },
  ) {
    this.drops = new ReplicaDrops({
      publisher: deps.publisher,
      subscriber: deps.subscriber,
      channel: deps.channel,
      onDrop: (prefix) => this.cache.delete(prefix),
      onReset: () => this.cache.clear(),
    });
  }

  /** Subscribes to revocations; call once at start. */
  async start(): Promise<void> {
    await this.drops.start();
  }

  /**
   * The live key record for `key`, or undefined when the key is unknown,
   * wrong, revoked or expired. The comparison of hashes is constant-time.
   */
  async verify(key: string, now = Date.now()): Promise<R | undefined> {
    const prefix = key.slice(0, this.deps.prefixLength ?? KEY_PREFIX_LENGTH);
    let entry = this.cache.get(prefix);
    if (entry === undefined || now - entry.at > CACHE_TTL_MS) {
      const generation = this.drops.generation;
      entry = { record: await this.deps.repository.findByPrefix(prefix), at: now };
      if (entry.record !== undefined && generation === this.drops.generation) this.cache.set(prefix, entry);
    }
    const record = entry.record;
    if (record === undefined || record.revoked) return undefined;
    if (!timingSafeEqual(Buffer.from(hashApiKey(key), 'hex'), Buffer.from(record.keyHash, 'hex'))) return undefined;
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) return undefined;
    this.touch(record.id, now);
    return record;
  }

  /**
   * Tells every replica (this one included) to forget the key with `prefix`;
   * resolves once each has (at most 2 s). Throws when Redis refuses.
   */
  async invalidate(prefix: string): Promise<void> {
    await this.drops.publish(prefix);
  }

  private touch(id: string, now: number): void {
    const last = this.touched.get(id) ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(id, now);
    this.deps.repository
      .touch(id)
      .catch((err: unknown) => this.deps.logger.warn({ err, apiKeyId: id }, 'api key touch failed'));
  }
}
