import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { ACCESS_TOKEN_ALG, type SigningKeys } from './signing-keys';

/** The JWT `typ` of access tokens (RFC 9068 §2.1), which also tells them apart from login tokens. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

/** The claims of an access token (RFC 9068 §2.2; `gid`/`fid` name its grant and refresh family). */
export interface AccessTokenClaims {
  readonly sub: string;
  readonly aud: string;
  readonly clientId: string;
  readonly scope: string;
  readonly jti: string;
  readonly grantId: string;
  readonly familyId: string;
  /** An agent resource's sign-in mode when the token was issued (`dsm`); absent for `/mcp`. */
  readonly signInMode?: string | undefined;
  readonly iat: number;
  readonly exp: number;
}

/** True when `token` looks like one of our access tokens (a JWS whose header says `at+jwt`). */
export function isAccessToken(token: string): boolean {
  if (token.split('.').length !== 3) return false;
  try {
    return decodeProtectedHeader(token).typ === ACCESS_TOKEN_TYP;
  } catch {
    return false;
  }
}

/**
 * Signs and verifies access tokens: JWTs of `ttlSeconds`
 * with `iss`, `sub` (user id), `aud` (the resource), `client_id`, `scope`,
 * `jti`, signed ES256 with the current key of {@link SigningKeys}.
 */
export class AccessTokens {
  constructor(private readonly deps: { keys: SigningKeys; issuer: string; ttlSeconds: number }) {}

  /** A new access token and its lifetime in seconds. */
  async sign(claims: Omit<AccessTokenClaims, 'jti' | 'iat' | 'exp'>): Promise<{ token: string; expiresIn: number }> {
    const { kid, key } = await this.deps.keys.current();
    const token = await new SignJWT({
      client_id: claims.clientId,
      scope: claims.scope,
      gid: claims.grantId,
      fid: claims.familyId,
      ...(claims.signInMode !== undefined ? { dsm: claims.signInMode } : {}),
    })
      .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, typ: ACCESS_TOKEN_TYP, kid })
      .setIssuer(this.deps.issuer)
      .setSubject(claims.sub)
      .setAudience(claims.aud)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${this.deps.ttlSeconds}s`)
      .sign(key);
    return { token, expiresIn: this.deps.ttlSeconds };
  }

  /**
   * Verifies signature, `typ`, issuer, expiry and, when given, the audience.
   *
   * @returns the claims, or undefined for any token that does not verify
   */
  async verify(token: string, audience: string | undefined): Promise<AccessTokenClaims | undefined> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = header.kid === undefined ? undefined : await this.deps.keys.publicKey(header.kid);
          if (key === undefined) throw new errors.JWKSNoMatchingKey();
          return key;
        },
        {
          issuer: this.deps.issuer,
          typ: ACCESS_TOKEN_TYP,
          algorithms: [ACCESS_TOKEN_ALG],
          ...(audience !== undefined ? { audience } : {}),
        },
      );
      const { sub, aud, jti, iat, exp } = payload;
      const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
      const clientId = str(payload.client_id);
      const scope = str(payload.scope);
      const grantId = str(payload.gid);
      const familyId = str(payload.fid);
      const audience0 = Array.isArray(aud) ? aud[0] : aud;
      if (
        sub === undefined ||
        audience0 === undefined ||
        jti === undefined ||
        iat === undefined ||
        exp === undefined ||
        clientId === undefined ||
        scope === undefined ||
        grantId === undefined ||
        familyId === undefined
      ) {
        return undefined;
      }
      const signInMode = str(payload.dsm);
      return { sub, aud: audience0, clientId, scope, jti, grantId, familyId, iat, exp, signInMode };
    } catch {
      return undefined;
    }
  }
}
