import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { DaguError, type Principal } from '@dagu-mcp/contracts';
import { attemptPassword } from './authenticator';
import type { FailureLimiter } from './failure-limiter';
import type { LoginSessions } from './login-sessions';
import { verifyUserPassword } from './password';
import type { UserRepository } from './user.repository';

/** Name of the cookie that carries a browser session (docs/security.md "Browser sessions"). */
export const SESSION_COOKIE = 'dagu_session';

/** A signed-in browser: who it is now (live role) and the token its page sends back as `X-CSRF-Token`. */
export interface BrowserSession {
  readonly sessionId: string;
  readonly userId: string;
  readonly username: string;
  /** The user's current role, credential type `session`. */
  readonly principal: Principal;
  readonly csrfToken: string;
  /** Epoch ms after which the session is gone. */
  readonly expiresAt: number;
}

const StoredSessionSchema = z.object({
  sessionId: z.string(),
  userId: z.string(),
  tokenVersion: z.number(),
  csrfToken: z.string(),
  expiresAt: z.number(),
});
type StoredSession = z.infer<typeof StoredSessionSchema>;

/**
 * Browser sessions of `AUTH_MODE=builtin`:
 * the sign-in pages of the OAuth authorization server and the web console share them.
 *
 * A session is a random 32-byte cookie value; Redis keeps the record under the value's
 * SHA-256 (`<prefix>:auth:browser-session:<hash>`), never the value, with a TTL of
 * `ttlMs`, so every gateway replica sees it and a Redis dump holds nothing usable. On
 * each use the user is read as it is now (the login-token cache, `LOGIN_STATE_CACHE_MS`):
 * a deleted user or a password reset (token version bump) ends the session, a role
 * change applies at once.
 */
export class BrowserSessions {
  constructor(
    private readonly deps: {
      redis: Redis;
      prefix: string;
      users: UserRepository;
      logins: LoginSessions;
      limiter: FailureLimiter;
      /** Session lifetime, ms (`BROWSER_SESSION_TTL_MS`). */
      ttlMs: number;
    },
  ) {}

  private key(cookieValue: string): string {
    const digest = createHash('sha256').update(cookieValue).digest('base64url');
    return `${this.deps.prefix}:auth:browser-session:${digest}`;
  }

  /**
   * Checks the password under the brute-force limits and opens a session.
   *
   * @param address the client address (`req.ip`), for the per-address limit
   * @returns the cookie value to set and the session
   * @throws TooManyFailures when the username-and-address pair or the address is over its limit
   * @throws DaguError `unauthenticated` for a wrong username or password
   */
  async signIn(
    username: string,
    password: string,
    address: string,
  ): Promise<{ cookieValue: string; session: BrowserSession }> {
    const found = await attemptPassword(this.deps.limiter, address, username, async () => {
      const user = await this.deps.users.findByUsername(username);
      return (await verifyUserPassword(user?.passwordHash, password)) ? user : undefined;
    });
    if (found === undefined) throw new DaguError('unauthenticated', 'Wrong username or password.');
    const cookieValue = randomBytes(32).toString('base64url');
    const stored: StoredSession = {
      sessionId: randomUUID(),
      userId: found.user.id,
      tokenVersion: found.tokenVersion,
      csrfToken: randomBytes(24).toString('base64url'),
      expiresAt: Date.now() + this.deps.ttlMs,
    };
    await this.deps.redis.set(this.key(cookieValue), JSON.stringify(stored), 'PX', this.deps.ttlMs);
    return {
      cookieValue,
      session: {
        sessionId: stored.sessionId,
        userId: found.user.id,
        username: found.user.username,
        principal: principalFor(found.user),
        csrfToken: stored.csrfToken,
        expiresAt: stored.expiresAt,
      },
    };
  }

  /**
   * The session a cookie value stands for, or undefined when it is unknown, expired, its
   * user is gone or changed password.
   */
  async resolve(cookieValue: string): Promise<BrowserSession | undefined> {
    if (cookieValue === '' || cookieValue.length > 200) return undefined;
    const raw = await this.deps.redis.get(this.key(cookieValue));
    if (raw === null) return undefined;
    const parsed = StoredSessionSchema.safeParse(JSON.parse(raw));
    if (!parsed.success) return undefined;
    const stored = parsed.data;
    const state = await this.deps.logins.currentUser(stored.userId);
    if (state === undefined || state.tokenVersion !== stored.tokenVersion) return undefined;
    return {
      sessionId: stored.sessionId,
      userId: state.user.id,
      username: state.user.username,
      principal: principalFor(state.user),
      csrfToken: stored.csrfToken,
      expiresAt: stored.expiresAt,
    };
  }

  /** Ends the session of a cookie value on every replica (idempotent). */
  async signOut(cookieValue: string): Promise<void> {
    await this.deps.redis.del(this.key(cookieValue));
  }
}

function principalFor(user: { id: string; username: string; role: Principal['role'] }): Principal {
  return { id: `user:${user.id}`, subject: user.username, role: user.role, credentialType: 'session' };
}
