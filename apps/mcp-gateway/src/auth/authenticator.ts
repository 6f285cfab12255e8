import { createHash, timingSafeEqual } from 'node:crypto';
import { ANONYMOUS_PRINCIPAL, DaguError, type Principal } from '@dagu-mcp/contracts';
import type { Surface } from './api-key.repository';
import type { ApiKeyVerifier } from './api-key-cache';
import type { Credential } from './credentials';
import type { FailureLimiter } from './failure-limiter';
import type { LoginTokens } from './login-token';
import { verifyUserPassword } from './password';
import type { UserRepository } from './user.repository';

/** `AUTH_MODE` (020 §Authentication: the server's configured mode). */
export type AuthMode = 'builtin' | 'basic' | 'none';

/** Who the caller is, and for an API key, where the key is accepted. */
export interface Authenticated {
  readonly principal: Principal;
  readonly surfaces?: readonly Surface[];
}

/** Raised when the caller used up its failed attempts: answered 429 with `Retry-After`. */
export class TooManyFailures extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many failed attempts.');
  }
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
      tokens: LoginTokens;
      limiter: FailureLimiter;
      basic?: { username: string; password: string };
    },
  ) {}

  /** The `WWW-Authenticate` challenges of the enabled schemes (one per scheme). */
  challenges(): string[] {
    return this.deps.mode === 'none' ? [] : ['Bearer realm="dagu"', 'Basic realm="dagu", charset="UTF-8"'];
  }

  /**
   * @throws DaguError `unauthenticated` for a missing, malformed or wrong credential
   * @throws TooManyFailures when the address or username is rate-limited
   */
  async authenticate(credential: Credential | undefined | 'malformed', address: string): Promise<Authenticated> {
    if (this.deps.mode === 'none') return { principal: ANONYMOUS_PRINCIPAL };
    if (credential === undefined) throw new DaguError('unauthenticated', 'Authentication is required.');
    if (credential === 'malformed') throw new DaguError('unauthenticated', 'The Authorization header is malformed.');
    const username = credential.scheme === 'basic' ? credential.username : undefined;
    // A blocked username or address is refused before any verification. For bearer
    // credentials the address check is memoised for a second (FailureLimiter.checkAddress),
    // so the hot path does not pay a Redis round trip per request.
    if (credential.scheme === 'basic') await this.refuseIfBlocked(address, username);
    else {
      const blocked = await this.deps.limiter.checkAddress(address);
      if (blocked !== undefined) throw new TooManyFailures(blocked.retryAfterSeconds);
    }
    const result = await this.verify(credential);
    if (result === undefined) {
      await this.deps.limiter.recordFailure(address, username);
      throw new DaguError('unauthenticated', 'The credential is not valid.');
    }
    return result;
  }

  private async refuseIfBlocked(address: string, username: string | undefined): Promise<void> {
    const blocked = await this.deps.limiter.check(address, username);
    if (blocked !== undefined) throw new TooManyFailures(blocked.retryAfterSeconds);
  }

  private async verify(credential: Credential): Promise<Authenticated | undefined> {
    if (credential.scheme === 'bearer') {
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
      const claims = await this.deps.tokens.verify(credential.token);
      if (claims === undefined) return undefined;
      return {
        principal: {
          id: `user:${claims.userId}`,
          subject: claims.username,
          role: claims.role,
          credentialType: 'token',
        },
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
