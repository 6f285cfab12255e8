import { SignJWT, jwtVerify } from 'jose';
import type { Pool, SecretBox } from '@dagu-mcp/runtime';
import { RoleSchema, type Role } from '@dagu-mcp/contracts';
import { loadTokenSecret } from './token-secret';

/** The claims of a login token. */
export interface LoginClaims {
  readonly userId: string;
  readonly username: string;
  readonly role: Role;
}

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

  /** Issues a token for a user; `expiresAt` is RFC 3339 UTC. */
  async issue(claims: LoginClaims): Promise<{ token: string; expiresAt: string }> {
    const exp = Math.floor(Date.now() / 1000) + this.ttlSeconds;
    const token = await new SignJWT({ username: claims.username, role: claims.role })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.userId)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000).toISOString() };
  }

  /** The claims of a valid, unexpired token; undefined for anything else. */
  async verify(token: string): Promise<LoginClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      const role = RoleSchema.safeParse(payload.role);
      if (typeof payload.sub !== 'string' || typeof payload.username !== 'string' || !role.success) return undefined;
      return { userId: payload.sub, username: payload.username, role: role.data };
    } catch {
      return undefined;
    }
  }
}
