import type { User, UserRepository } from '../auth/user.repository';

/**
 * Users as they are now, for OAuth (scopes are capped by the
 * user's current role, a deleted user's tokens stop): read from PostgreSQL,
 * remembered per replica for `cacheMs` (the same bound as login tokens,
 * `LOGIN_STATE_CACHE_MS`).
 */
export class LiveUsers {
  private readonly cache = new Map<string, { user: User | undefined; until: number }>();

  constructor(private readonly deps: { repository: UserRepository; cacheMs: number }) {}

  /** The user, or undefined when deleted. */
  async get(userId: string, now = Date.now()): Promise<User | undefined> {
    const hit = this.cache.get(userId);
    if (hit !== undefined && hit.until > now) return hit.user;
    const state = /^[0-9a-f-]{36}$/i.test(userId) ? await this.deps.repository.findAuthState(userId) : undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(userId, { user: state?.user, until: now + this.deps.cacheMs });
    return state?.user;
  }

  /** Forgets a user (after a change this replica made). */
  forget(userId: string): void {
    this.cache.delete(userId);
  }
}
