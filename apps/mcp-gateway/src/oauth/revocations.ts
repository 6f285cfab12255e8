import type { Redis } from 'ioredis';

/**
 * Revoked grants and token families as every replica sees them:
 * a Redis key per revoked id, kept as long as an access token issued before the
 * revocation may live. Each replica remembers a "not revoked" answer for
 * `checkMs`, so a revocation stops live access tokens on every replica within
 * `checkMs` (the stated bound; default 5 s) without a Redis round trip per call.
 */
export class Revocations {
  private readonly clear = new Map<string, number>();

  constructor(private readonly deps: { redis: Redis; prefix: string; keepMs: number; checkMs: number }) {}

  private key(id: string): string {
    return `${this.deps.prefix}:oauth:revoked:${id}`;
  }

  /** Marks grant or family ids revoked on every replica. */
  async revoke(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const multi = this.deps.redis.multi();
    for (const id of ids) multi.set(this.key(id), '1', 'PX', this.deps.keepMs);
    await multi.exec();
    for (const cached of [...this.clear.keys()]) {
      if (cached.split(' ').some((id) => ids.includes(id))) this.clear.delete(cached);
    }
  }

  /** Whether any of `ids` is revoked (answers "no" from the cache for up to `checkMs`). */
  async anyRevoked(ids: readonly string[], now = Date.now()): Promise<boolean> {
    const cacheKey = ids.join(' ');
    if ((this.clear.get(cacheKey) ?? 0) > now) return false;
    const found = await this.deps.redis.exists(...ids.map((id) => this.key(id)));
    if (found > 0) return true;
    if (this.clear.size > 10_000) this.clear.clear();
    this.clear.set(cacheKey, now + this.deps.checkMs);
    return false;
  }
}
