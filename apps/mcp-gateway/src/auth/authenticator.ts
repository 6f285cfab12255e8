import { createHash, timingSafeEqual } from 'node:crypto';
import { ANONYMOUS_PRINCIPAL, DaguError, type Principal } from '@dagu-mcp/contracts';
import type { Surface } from './api-key.repository';
import { isAgentKey } from './agent-key.repository';
import type { ApiKeyVerifier } from './api-key-cache';
import type { Credential } from './credentials';
import type { FailureLimiter } from './failure-limiter';
import type { LoginSessions } from './login-sessions';
import { verifyUserPassword } from './password';
import type { UserRepository } from './user.repository';

/** `AUTH_MODE` (020 §Authentication: the server's configured mode). */
export type AuthMode = 'builtin' | 'basic' | 'none';

/** Who the caller is, and for an API key, where the key is accepted. */
export interface Authenticated {
  readonly principal: Principal;
  readonly surfaces?: readonly Surface[];
  /** For a login token: its id and expiry (epoch s), what logout revokes. */
  readonly loginToken?: { readonly tokenId: string; readonly expiresAt: number };
  /** For an OAuth access token: the scopes it holds now. */
  readonly scopes?: readonly string[];
}

/**
 * Verifies OAuth access tokens of the built-in authorization server,
 * implemented in `oauth/`; declared here so that `auth/` does not import upward.
 */
export interface OAuthAccessVerifier {
  /** True when the token is shaped like an OAuth access token (not a login token). */
  isAccessToken(token: string): boolean;
  /** The principal and live scopes for `resource`, or undefined when the token does not verify. */
  verifyAccess(
    token: string,
    resource: string,
  ): Promise<{ principal: Principal; scopes: readonly string[] } | undefined>;
}

/** Raised when the caller used up its failed attempts: answered 429 with `Retry-After`. */
export class TooManyFailures extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many failed attempts.');
  }
}

/**
 * Checks a password under the failure limits (docs/security.md "Role
 * boundaries", item 5): reserves the failure first (a refused pair or address
 * throws `TooManyFailures` before any hash is computed), waits out the
 * username's slowdown, runs `check`, then settles the reservation.
 *
 * @returns what `check` returned (undefined = wrong password)
 * @throws TooManyFailures when the username-and-address pair or the address is over its limit
 */
export async function attemptPassword<T>(
  limiter: FailureLimiter,
  address: string,
  username: string,
  check: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const reserved = await limiter.reserve(address, username);
  if ('retryAfterSeconds' in reserved) throw new TooManyFailures(reserved.retryAfterSeconds);
  if (reserved.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, reserved.delayMs));
  const result = await check();
  await limiter.settle(address, username, result !== undefined);
  return result;
}

/** Constant-time string equality (compares SHA-256 digests, so lengths leak nothing). */
export function safeEqual(a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Turns a credential into a principal per the auth mode: login tokens and
 * API keys (Bearer), users' passwords (Basic, builtin) or the one configured
 * user (basic). Failed attempts count towards the rate limit.
 */
export class Authenticator {
  constructor(
    private readonly deps: {
      mode: AuthMode;
      users: UserRepository;
      apiKeys: ApiKeyVerifier;
      sessions: LoginSessions;
      limiter: FailureLimiter;
      basic?: { username: string; password: string };
      /** The built-in authorization server's access tokens (AUTH_MODE=builtin with OAuth on). */
      oauth?: OAuthAccessVerifier;
    },
  ) {}

  /** The `WWW-Authenticate` challenges of the enabled schemes (one per scheme). */
  challenges(): string[] {
    return this.deps.mode === 'none' ? [] : ['Bearer realm="dagu"', 'Basic realm="dagu", charset="UTF-8"'];
  }

  /**
   * @throws DaguError `unauthenticated` for a missing, malformed or wrong credential
   * @throws TooManyFailures when the address or username is rate-limited
   * @param resource the OAuth resource the request addresses (an MCP endpoint); undefined
   *   elsewhere, where OAuth access tokens are refused
   */
  async authenticate(
    credential: Credential | undefined | 'malformed',
    address: string,
    resource?: string,
  ): Promise<Authenticated> {
    if (this.deps.mode === 'none') return { principal: ANONYMOUS_PRINCIPAL };
    if (credential === undefined) throw new DaguError('unauthenticated', 'Authentication is required.');
    if (credential === 'malformed') throw new DaguError('unauthenticated', 'The Authorization header is malformed.');
    if (credential.scheme === 'basic') {
      // A password: the failure is reserved before the hash (attemptPassword).
      const result = await attemptPassword(this.deps.limiter, address, credential.username, () =>
        this.verify(credential),
      );
      if (result === undefined) throw new DaguError('unauthenticated', 'The credential is not valid.');
      return result;
    }
    // Bearer credentials: the address check is memoised for a second (FailureLimiter.checkAddress),
    // so the hot path does not pay a Redis round trip per request.
    const blocked = await this.deps.limiter.checkAddress(address);
    if (blocked !== undefined) throw new TooManyFailures(blocked.retryAfterSeconds);
    const result = await this.verify(credential, resource);
    if (result === undefined) {
      await this.deps.limiter.recordFailure(address);
      throw new DaguError('unauthenticated', 'The credential is not valid.');
    }
    return result;
  }

  private async verify(credential: Credential, resource?: string): Promise<Authenticated | undefined> {
    if (credential.scheme === 'bearer') {
      const oauth = this.deps.oauth;
      if (oauth !== undefined && oauth.isAccessToken(credential.token)) {
        if (resource === undefined) {
          throw new DaguError(
            'unauthenticated',
            'OAuth access tokens are accepted on MCP endpoints only; use an API key or a login token here.',
          );
        }
        const access = await oauth.verifyAccess(credential.token, resource);
        if (access === undefined) return undefined;
        // The scopes travel with the principal: tools/list and the step-up rule read them.
        return { principal: { ...access.principal, scopes: [...access.scopes] }, scopes: access.scopes };
      }
      // An agent key is accepted only on its agent's endpoint (agents/agent-endpoint.ts).
      if (isAgentKey(credential.token)) return undefined;
      if (credential.token.startsWith('dagu_')) {
        const key = await this.deps.apiKeys.verify(credential.token);
        if (key === undefined) return undefined;
        return {
          principal: {
            id: `api_key:${key.id}`,
            subject: `api_key:${key.name}`,
            role: key.role,
            credentialType: 'api_key',
          },
          surfaces: key.surfaces,
        };
      }
      if (this.deps.mode !== 'builtin') return undefined;
      // The role comes from the user as it is now, never from the token (docs/security.md "Role boundaries").
      const session = await this.deps.sessions.resolve(credential.token);
      if (session === undefined) return undefined;
      return {
        principal: session.principal,
        loginToken: { tokenId: session.tokenId, expiresAt: session.expiresAt },
      };
    }
    if (this.deps.mode === 'basic') {
      const basic = this.deps.basic;
      const ok =
        basic !== undefined &&
        safeEqual(credential.username, basic.username) &&
        safeEqual(credential.password, basic.password);
      return ok
        ? {
            principal: {
              id: `user:${basic.username}`,
              subject: basic.username,
              role: 'admin',
              credentialType: 'basic',
            },
          }
        : undefined;
    }
    const found = await this.deps.users.findByUsername(credential.username);
    if (!(await verifyUserPassword(found?.passwordHash, credential.password)) || found === undefined) return undefined;
    return {
      principal: {
        id: `user:${found.user.id}`,
        subject: found.user.username,
        role: found.user.role,
        credentialType: 'basic',
      },
    };
  }
}
