import type { Redis } from 'ioredis';
import type { Logger } from '@dagu-mcp/runtime';
import type { Principal } from '@dagu-mcp/contracts';
import type { LoginTokens, VerifiedLoginToken } from './login-token';
import type { User, UserRepository } from './user.repository';
import { ReplicaDrops } from './replica-drops';

/**
 * How long a replica trusts what it read about a user (role, name, token
 * version) or a token's "not logged out" answer without asking again, ms.
 * This is the bound on revocation when an invalidation message is lost (a
 * Redis hiccup, or `admin:reset-password` run where Redis is unreachable).
 */
export const LOGIN_STATE_CACHE_MS = 5_000;

interface UserEntry {
  readonly state: { user: User; tokenVersion: number } | undefined;
  readonly until: number;
}

/** A login token in use: the principal it acts as now, and its id and expiry (for logout). */
export interface LoginSession {
  readonly principal: Principal;
  readonly tokenId: string;
  readonly expiresAt: number;
}

/**
 * Login tokens follow the user (docs/security.md "Role boundaries", item 4):
 * on every use the token's user is looked up (cached `LOGIN_STATE_CACHE_MS`)
 * and the principal takes the user's live role; a deleted user, a bumped
 * token version (password reset) or a logged-out token id ends the token.
 * A change drops the cached entry on every replica and returns once each
 * has ({@link ReplicaDrops}).
 */
export class LoginSessions {
  private readonly users = new Map<string, UserEntry>();
  /** Token ids seen not logged out, until when (epoch ms). */
  private readonly live = new Map<string, number>();
  private readonly drops: ReplicaDrops;

  /** @param prefix key and channel prefix, e.g. the bus prefix `dagu` */
  constructor(
    private readonly deps: {
      tokens: LoginTokens;
      repository: UserRepository;
      publisher: Redis;
      subscriber: Redis;
      prefix: string;
      logger: Logger;
    },
  ) {
    this.drops = new ReplicaDrops({
      publisher: deps.publisher,
      subscriber: deps.subscriber,
      channel: loginChangedChannel(deps.prefix),
      onDrop: (message) => {
        if (message.startsWith('user:')) this.users.delete(message.slice('user:'.length));
        else if (message.startsWith('token:')) this.live.delete(message.slice('token:'.length));
      },
      onReset: () => {
        this.users.clear();
        this.live.clear();
      },
    });
  }

  private revokedKey(tokenId: string): string {
    return `${this.deps.prefix}:auth:logged-out:${tokenId}`;
  }

  /** Subscribes to user changes and logouts; call once at start. */
  async start(): Promise<void> {
    await this.drops.start();
  }

  /**
   * The session of a login token, or undefined when the token is not a valid
   * login token, its user is gone, its version is older than the user's, or
   * it was logged out.
   */
  async resolve(token: string, now = Date.now()): Promise<LoginSession | undefined> {
    const verified = await this.deps.tokens.verify(token);
    if (verified === undefined) return undefined;
    const state = await this.userState(verified.userId, now);
    if (state === undefined || state.tokenVersion !== verified.tokenVersion) return undefined;
    if (await this.loggedOut(verified, now)) return undefined;
    return {
      principal: {
        id: `user:${state.user.id}`,
        subject: state.user.username,
        role: state.user.role,
        credentialType: 'token',
      },
      tokenId: verified.tokenId,
      expiresAt: verified.expiresAt,
    };
  }

  /** Ends one token on every replica: its id is kept in Redis until the token would have expired anyway. */
  async logOut(tokenId: string, expiresAt: number, now = Date.now()): Promise<void> {
    const ttl = Math.max(1, expiresAt - Math.floor(now / 1000));
    await this.deps.publisher.set(this.revokedKey(tokenId), '1', 'EX', ttl);
    await this.drops.publish(`token:${tokenId}`);
  }

  /** Tells every replica (this one included) to read the user again: after a role change, new password or delete. */
  async userChanged(userId: string): Promise<void> {
    await this.drops
      .publish(`user:${userId}`)
      .catch((err: unknown) => this.deps.logger.warn({ err, userId }, 'user change not published'));
  }

  /**
   * The user as it is now (role, name, token version) through the same short cache as
   * login tokens, or undefined when the user no longer exists. Browser sessions use it.
   */
  async currentUser(userId: string, now = Date.now()): Promise<UserEntry['state']> {
    return this.userState(userId, now);
  }

  private async userState(userId: string, now: number): Promise<UserEntry['state']> {
    const cached = this.users.get(userId);
    if (cached !== undefined && cached.until > now) return cached.state;
    const generation = this.drops.generation;
    const state = await this.deps.repository.findAuthState(userId);
    if (this.users.size > 10_000) this.users.clear();
    if (generation === this.drops.generation) this.users.set(userId, { state, until: now + LOGIN_STATE_CACHE_MS });
    return state;
  }

  private async loggedOut(token: VerifiedLoginToken, now: number): Promise<boolean> {
    if ((this.live.get(token.tokenId) ?? 0) > now) return false;
    const generation = this.drops.generation;
    const revoked = (await this.deps.publisher.exists(this.revokedKey(token.tokenId))) > 0;
    if (!revoked && generation === this.drops.generation) {
      if (this.live.size > 10_000) this.live.clear();
      this.live.set(token.tokenId, now + LOGIN_STATE_CACHE_MS);
    }
    return revoked;
  }
}

/** The channel `LoginSessions` listens on, for writers outside the gateway process (the reset CLI). */
export function loginChangedChannel(prefix: string): string {
  return `${prefix}:auth:login-changed`;
}
