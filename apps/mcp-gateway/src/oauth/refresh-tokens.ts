import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from '@dagu-mcp/runtime';

/** SHA-256 of a token as hex: what is stored in place of codes and refresh tokens. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh random opaque token (32 bytes, base64url) with a recognisable prefix. */
export function newOpaqueToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** What a refresh token stands for. */
export interface RefreshGrant {
  readonly familyId: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: string;
  readonly resource: string;
}

/** The outcome of presenting a refresh token. */
export type RotateOutcome =
  | { readonly ok: true; readonly token: string; readonly grant: RefreshGrant }
  | { readonly ok: false; readonly reason: string; readonly revokedFamily?: string };

interface TokenRow {
  family_id: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  resource: string;
  expired: boolean;
  rotated_ago_ms: number | null;
  revoked: boolean;
  grant_live: boolean;
}

/**
 * Refresh tokens: random, stored as SHA-256 hashes in
 * `oauth_refresh_tokens`, grouped in families (one per code exchange).
 * Every use rotates: the presented token is marked rotated and a successor is
 * issued. A rotated token presented again within `graceMs` (the client lost
 * the response) gets a new successor and the unused one is revoked; presented
 * later, it is a theft signal and the whole family is revoked.
 */
export class RefreshTokens {
  constructor(private readonly deps: { pool: Pool; ttlMs: number; graceMs: number }) {}

  /** Issues the first token of a new family (or the next one of `grant.familyId`). */
  async issue(grant: RefreshGrant): Promise<string> {
    const token = newOpaqueToken('drt_');
    await this.deps.pool.query(
      `INSERT INTO oauth_refresh_tokens (token_hash, family_id, grant_id, client_id, user_id, scope, resource, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
      [
        hashToken(token),
        grant.familyId,
        grant.grantId,
        grant.clientId,
        grant.userId,
        grant.scope,
        grant.resource,
        this.deps.ttlMs / 1000,
      ],
    );
    return token;
  }

  /**
   * Rotates `token` presented by `clientId`.
   *
   * @returns the successor and what it stands for, or why it was refused
   *   (`revokedFamily` set when reuse revoked the family)
   */
  async rotate(token: string, clientId: string): Promise<RotateOutcome> {
    const client = await this.deps.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<TokenRow>(
        `SELECT t.family_id, t.grant_id, t.client_id, t.user_id, t.scope, t.resource,
                t.expires_at <= now() AS expired, t.revoked_at IS NOT NULL AS revoked,
                (extract(epoch FROM now() - t.rotated_at) * 1000)::float8 AS rotated_ago_ms,
                g.revoked_at IS NULL AS grant_live
           FROM oauth_refresh_tokens t JOIN oauth_grants g ON g.id = t.grant_id
          WHERE t.token_hash = $1 FOR UPDATE OF t`,
        [hashToken(token)],
      );
      const row = rows[0];
      let outcome: RotateOutcome;
      if (row === undefined || row.client_id !== clientId) outcome = { ok: false, reason: 'unknown refresh token' };
      else if (row.revoked || !row.grant_live) outcome = { ok: false, reason: 'the refresh token was revoked' };
      else if (row.expired) outcome = { ok: false, reason: 'the refresh token expired' };
      else if (row.rotated_ago_ms !== null && row.rotated_ago_ms > this.deps.graceMs) {
        await client.query(
          'UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL',
          [row.family_id],
        );
        outcome = { ok: false, reason: 'the refresh token was already used', revokedFamily: row.family_id };
      } else {
        if (row.rotated_ago_ms !== null) {
          // Within the grace: the successor never reached the client; it is replaced.
          await client.query(
            `UPDATE oauth_refresh_tokens SET revoked_at = now()
              WHERE family_id = $1 AND rotated_at IS NULL AND revoked_at IS NULL`,
            [row.family_id],
          );
        } else {
          await client.query('UPDATE oauth_refresh_tokens SET rotated_at = now() WHERE token_hash = $1', [
            hashToken(token),
          ]);
        }
        await client.query('UPDATE oauth_grants SET last_used_at = now() WHERE id = $1', [row.grant_id]);
        const grant: RefreshGrant = {
          familyId: row.family_id,
          grantId: row.grant_id,
          clientId: row.client_id,
          userId: row.user_id,
          scope: row.scope,
          resource: row.resource,
        };
        const next = newOpaqueToken('drt_');
        await client.query(
          `INSERT INTO oauth_refresh_tokens (token_hash, family_id, grant_id, client_id, user_id, scope, resource, expires_at)
           SELECT $1, family_id, grant_id, client_id, user_id, $3, resource, expires_at
             FROM oauth_refresh_tokens WHERE token_hash = $2`,
          [hashToken(next), hashToken(token), grant.scope],
        );
        outcome = { ok: true, token: next, grant };
      }
      await client.query('COMMIT');
      return outcome;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Revokes the family of `token` when `clientId` holds it (RFC 7009).
   *
   * @returns the family id revoked, or undefined for an unknown token
   */
  async revokeFamilyOf(token: string, clientId: string): Promise<string | undefined> {
    const { rows } = await this.deps.pool.query<{ family_id: string }>(
      'SELECT family_id FROM oauth_refresh_tokens WHERE token_hash = $1 AND client_id = $2',
      [hashToken(token), clientId],
    );
    const family = rows[0]?.family_id;
    if (family !== undefined) await this.revokeFamily(family);
    return family;
  }

  /** Revokes every token of a family. */
  async revokeFamily(familyId: string): Promise<void> {
    await this.deps.pool.query(
      'UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL',
      [familyId],
    );
  }

  /** What a live (unrotated, unrevoked, unexpired) token stands for (RFC 7662 introspection). */
  async describe(token: string): Promise<(RefreshGrant & { expiresAt: number }) | undefined> {
    const { rows } = await this.deps.pool.query<TokenRow & { exp: string }>(
      `SELECT t.family_id, t.grant_id, t.client_id, t.user_id, t.scope, t.resource,
              extract(epoch FROM t.expires_at)::bigint AS exp
         FROM oauth_refresh_tokens t JOIN oauth_grants g ON g.id = t.grant_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > now()
          AND g.revoked_at IS NULL`,
      [hashToken(token)],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return {
      familyId: row.family_id,
      grantId: row.grant_id,
      clientId: row.client_id,
      userId: row.user_id,
      scope: row.scope,
      resource: row.resource,
      expiresAt: Number(row.exp),
    };
  }
}
