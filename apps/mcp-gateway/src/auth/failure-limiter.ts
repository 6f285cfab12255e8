import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

/** How long an address seen unblocked is trusted without asking Redis again, ms. */
const CLEAR_MEMO_MS = 1000;

/** A refused attempt: retry after this many seconds. */
export interface Blocked {
  readonly retryAfterSeconds: number;
}

/**
 * Rate-limits failed logins and failed credentials, shared across replicas
 * through Redis (rate-limiter-flexible): at most `perUser` failures per
 * username and `perAddress` per client address within `windowSeconds`.
 * Only the exhausted username or address is refused; others are unaffected.
 */
export class FailureLimiter {
  private readonly byUser: RateLimiterRedis;
  private readonly byAddress: RateLimiterRedis;
  /** Addresses seen unblocked, until when (epoch ms): spares the hot path a Redis round trip per request. */
  private readonly clearUntil = new Map<string, number>();

  constructor(opts: { redis: Redis; prefix: string; perUser: number; perAddress: number; windowSeconds: number }) {
    const common = { storeClient: opts.redis, duration: opts.windowSeconds, blockDuration: opts.windowSeconds };
    this.byUser = new RateLimiterRedis({ ...common, keyPrefix: `${opts.prefix}:authfail:user`, points: opts.perUser });
    this.byAddress = new RateLimiterRedis({
      ...common,
      keyPrefix: `${opts.prefix}:authfail:addr`,
      points: opts.perAddress,
    });
  }

  /** Refusal when the username or address has used up its failures, else undefined. */
  async check(address: string, username?: string): Promise<Blocked | undefined> {
    const [user, addr] = await Promise.all([
      username === undefined ? null : this.byUser.get(username),
      this.byAddress.get(address),
    ]);
    const over = [
      user !== null && user.consumedPoints >= this.byUser.points ? user.msBeforeNext : 0,
      addr !== null && addr.consumedPoints >= this.byAddress.points ? addr.msBeforeNext : 0,
    ];
    const ms = Math.max(...over);
    return ms > 0 ? { retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) } : undefined;
  }

  /**
   * Like `check` for an address alone, but trusts a "not blocked" answer for
   * `CLEAR_MEMO_MS` (1 s): a block another replica records is seen within a
   * second, and a request with a valid credential costs no Redis round trip.
   */
  async checkAddress(address: string, now = Date.now()): Promise<Blocked | undefined> {
    if ((this.clearUntil.get(address) ?? 0) > now) return undefined;
    const blocked = await this.check(address);
    if (blocked === undefined) {
      if (this.clearUntil.size > 10_000) this.clearUntil.clear();
      this.clearUntil.set(address, now + CLEAR_MEMO_MS);
    }
    return blocked;
  }

  /** Counts one failure for the address (and username when known). Never throws. */
  async recordFailure(address: string, username?: string): Promise<void> {
    this.clearUntil.delete(address);
    const tasks: Promise<unknown>[] = [this.byAddress.penalty(address, 1)];
    if (username !== undefined) tasks.push(this.byUser.penalty(username, 1));
    await Promise.allSettled(tasks);
  }

  /** Forgets a username's failures after a correct login. */
  async recordSuccess(username: string): Promise<void> {
    await this.byUser.delete(username).catch(() => undefined);
  }
}
