import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Pool, SecretBox } from '@dagu-mcp/runtime';
import type { Role } from '@dagu-mcp/contracts';
import { loadTokenSecret } from './token-secret';

/** What a login token is issued for. The role is not trusted from the token: it is read on use. */
export interface LoginClaims {
  readonly userId: string;
  readonly username: string;
  readonly role: Role;
  /** The user's `token_version` when the token was issued (a password reset bumps it). */
  readonly tokenVersion: number;
}

/** A login token that verified: who it names, under which version, its own id and expiry. */
export interface VerifiedLoginToken {
  readonly userId: string;
  readonly tokenVersion: number;
  /** The token's `jti`, what `POST /api/v1/auth/logout` revokes. */
  readonly tokenId: string;
  /** Expiry, epoch seconds. */
  readonly expiresAt: number;
}

/** The audience of login tokens; a token meant for anything else is refused as one. */
export const LOGIN_AUDIENCE = 'dagu-mcp:login';
const ISSUER = 'dagu-mcp';

/**
 * Signed login tokens (JWT, HS256, via `jose`), issued by
 * `POST /api/v1/auth/login` and accepted as `Authorization: Bearer …`.
 */
export class LoginTokens {
  private constructor(
    private readonly key: Uint8Array,
    private readonly ttlSeconds: number,
  ) {}

  /**
   * Uses `secret` when given; otherwise the instance secret kept encrypted
   * with `box` in the gateway's `settings` table (`loadTokenSecret`).
   */
  static async create(opts: {
    secret: string | undefined;
    ttlSeconds: number;
    pool: Pool;
    box: SecretBox;
  }): Promise<LoginTokens> {
    const secret = opts.secret ?? (await loadTokenSecret(opts.pool, opts.box));
    return new LoginTokens(new TextEncoder().encode(secret), opts.ttlSeconds);
  }

  /** Issues a token for a user; `expiresAt` is RFC 3339 UTC. The token carries `aud: "dagu-mcp:login"`. */
  async issue(claims: LoginClaims): Promise<{ token: string; expiresAt: string }> {
    const exp = Math.floor(Date.now() / 1000) + this.ttlSeconds;
    // `role` stays in the token for clients that show it; the gateway never trusts it.
    const token = await new SignJWT({ username: claims.username, role: claims.role, ver: claims.tokenVersion })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.userId)
      .setIssuer(ISSUER)
      .setAudience(LOGIN_AUDIENCE)
      .setJti(randomBytes(16).toString('base64url'))
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000).toISOString() };
  }

  /**
   * The identity of a validly signed, unexpired login token (issuer
   * `dagu-mcp`, audience `dagu-mcp:login`); undefined for anything else. Says
   * nothing about whether the user still exists or the token was revoked:
   * `LoginSessions` checks that.
   */
  async verify(token: string): Promise<VerifiedLoginToken | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: LOGIN_AUDIENCE,
        algorithms: ['HS256'],
      });
      const { sub, jti, exp, ver } = payload;
      if (typeof sub !== 'string' || typeof jti !== 'string' || typeof exp !== 'number') return undefined;
      if (typeof ver !== 'number' || !Number.isInteger(ver)) return undefined;
      return { userId: sub, tokenVersion: ver, tokenId: jti, expiresAt: exp };
    } catch {
      return undefined;
    }
  }
}
