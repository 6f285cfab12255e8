import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** How long an address seen unblocked is trusted without asking Redis again, ms. */
const CLEAR_MEMO_MS = 1000;
/** The first slowdown step once a username has used up its free failures, ms; it doubles per further failure. */
const SLOWDOWN_BASE_MS = 250;
/** The longest a password attempt is held back, ms. */
export const SLOWDOWN_MAX_MS = 8_000;

/** A refused attempt: retry after this many seconds. */
export interface Blocked {
  readonly retryAfterSeconds: number;
}

/** A password attempt that may go ahead: it already counts as a failure until `settle(…, true)`. */
export interface Reservation {
  /** How long to hold the attempt back before checking the password (the username's slowdown), ms. */
  readonly delayMs: number;
}

/**
 * Rate-limits failed logins and failed credentials, shared across replicas
 * through Redis (rate-limiter-flexible), so that no attacker can lock a user
 * out (docs/security.md "Role boundaries", item 5):
 *
 * - **username + address**: at most `perUser` failures of one username from
 *   one address per window; then that pair alone is refused (429);
 * - **address**: at most `perAddress` failures from one address (all
 *   usernames and bearer credentials together); then that address is refused;
 * - **username** (all addresses): never refused, only slowed: after
 *   `perUser` failures each attempt waits 250 ms, doubling per further
 *   failure, at most `SLOWDOWN_MAX_MS` — the right password from a clean
 *   address still logs in.
 *
 * A password attempt reserves its failure before the password is hashed (one
 * atomic increment per key in Redis), so a parallel burst cannot pass the
 * limit before the failures are recorded; a correct password gives the
 * reservation back, and so does a refused attempt. So at most `perUser`
 * password checks of one username from one address run at once: a client
 * sending more Basic-authenticated requests in parallel gets 429 for the
 * excess (login tokens and API keys have no such bound).
 */
export class FailureLimiter {
  private readonly byPair: RateLimiterRedis;
  private readonly byAddress: RateLimiterRedis;
  private readonly byUser: RateLimiterRedis;
  /** Addresses seen unblocked, until when (epoch ms): spares the hot path a Redis round trip per request. */
  private readonly clearUntil = new Map<string, number>();

  constructor(
    private readonly opts: { redis: Redis; prefix: string; perUser: number; perAddress: number; windowSeconds: number },
  ) {
    // A fixed window per key, no extra block: a refused attempt is refunded (see consume), so
    // only checked passwords count, and legitimate parallel requests never extend a block.
    const common = { storeClient: opts.redis, duration: opts.windowSeconds };
    this.byPair = new RateLimiterRedis({ ...common, keyPrefix: `${opts.prefix}:authfail:pair`, points: opts.perUser });
    this.byAddress = new RateLimiterRedis({
      ...common,
      keyPrefix: `${opts.prefix}:authfail:addr`,
      points: opts.perAddress,
    });
    // Counts a username's failures from everywhere; never blocks, only sets the slowdown.
    this.byUser = new RateLimiterRedis({
      storeClient: opts.redis,
      duration: opts.windowSeconds,
      keyPrefix: `${opts.prefix}:authfail:user`,
      points: Number.MAX_SAFE_INTEGER,
    });
  }

  /**
   * Reserves one failure for `username` from `address` before its password
   * is checked: refused when the pair or the address has used up its
   * failures, else the slowdown to apply. Follow with {@link settle}.
   */
  async reserve(address: string, username: string): Promise<Blocked | Reservation> {
    this.clearUntil.delete(address);
    const pair = await consume(this.byPair, pairKey(address, username));
    if ('retryAfterSeconds' in pair) return pair;
    const addr = await consume(this.byAddress, address);
    if ('retryAfterSeconds' in addr) {
      await this.byPair.reward(pairKey(address, username), 1).catch(() => undefined);
      return addr;
    }
    const user = await this.byUser.get(username);
    return { delayMs: slowdownMs(user?.consumedPoints ?? 0, this.opts.perUser) };
  }

  /**
   * Ends a reserved attempt. A correct password clears the pair, gives the
   * address its point back and ends the username's slowdown; a wrong one
   * adds to the username's slowdown (the pair and address keep the
   * reserved failure). Never throws.
   */
  async settle(address: string, username: string, ok: boolean): Promise<void> {
    const tasks = ok
      ? [
          this.byPair.delete(pairKey(address, username)),
          this.byAddress.reward(address, 1),
          this.byUser.delete(username),
        ]
      : [this.byUser.penalty(username, 1)];
    await Promise.allSettled(tasks);
  }

  /** Refusal when the address has used up its failures, else undefined (bearer credentials: no username). */
  async check(address: string): Promise<Blocked | undefined> {
    const addr = await this.byAddress.get(address);
    const ms = addr !== null && addr.consumedPoints >= this.byAddress.points ? addr.msBeforeNext : 0;
    return ms > 0 ? { retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) } : undefined;
  }

  /**
   * Like `check`, but trusts a "not blocked" answer for `CLEAR_MEMO_MS`
   * (1 s): a block another replica records is seen within a second, and a
   * request with a valid credential costs no Redis round trip.
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

  /** Counts one failed bearer credential (token or API key) for the address. Never throws. */
  async recordFailure(address: string): Promise<void> {
    this.clearUntil.delete(address);
    await this.byAddress.penalty(address, 1).catch(() => undefined);
  }
}

/** The slowdown after `failures` failures of a username when `free` are allowed without one, ms. */
export function slowdownMs(failures: number, free: number): number {
  if (failures < free) return 0;
  return Math.min(SLOWDOWN_MAX_MS, SLOWDOWN_BASE_MS * 2 ** Math.min(failures - free, 16));
}

function pairKey(address: string, username: string): string {
  // The address never contains a newline, so the pair key is unambiguous.
  return `${username}\n${address}`;
}

/**
 * One atomic increment; a refusal when the key is over its points. A refused
 * attempt gives its point back at once (it checks no password), so the count
 * is the failures plus the checks in flight, never more.
 */
async function consume(limiter: RateLimiterRedis, key: string): Promise<Blocked | { ok: true }> {
  try {
    await limiter.consume(key, 1);
    return { ok: true };
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    await limiter.reward(key, 1).catch(() => undefined);
    return { retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
  }
}
