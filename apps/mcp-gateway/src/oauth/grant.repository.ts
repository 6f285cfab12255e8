import { randomUUID } from 'node:crypto';
import type { Pool } from '@dagu-mcp/runtime';

/** A user's authorization of a client (the remembered consent; one entry of the authorizations page). */
export interface Grant {
  readonly id: string;
  readonly userId: string;
  readonly username: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly scope: string;
  /** The resources (`/mcp`, agents' URLs) the consent was given for: a remembered consent covers only these. */
  readonly resources: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly lastUsedAt: string | null;
  readonly clientCreatedAt: string | null;
  /** Live (not revoked, not expired) refresh tokens of the grant. */
  readonly tokenCount: number;
}

interface GrantRow {
  id: string;
  user_id: string;
  username: string;
  client_id: string;
  client_name: string;
  scope: string;
  resources: string[];
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  client_created_at: Date | null;
  token_count: string;
}

const SELECT = `
  SELECT g.id, g.user_id, u.username, g.client_id, g.client_name, g.scope, g.resources, g.created_at, g.updated_at,
         g.last_used_at, c.created_at AS client_created_at,
         (SELECT count(*) FROM oauth_refresh_tokens t
           WHERE t.grant_id = g.id AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > now()) AS token_count
    FROM oauth_grants g JOIN users u ON u.id = g.user_id LEFT JOIN oauth_clients c ON c.client_id = g.client_id
   WHERE g.revoked_at IS NULL`;

/**
 * Grants in `oauth_grants`: one live grant per user and
 * client. Revoking a grant revokes every refresh token issued under it.
 */
export class GrantRepository {
  constructor(private readonly pool: Pool) {}

  /** The live grant of `userId` for `clientId`, if any. */
  async find(userId: string, clientId: string): Promise<Grant | undefined> {
    const { rows } = await this.pool.query<GrantRow>(`${SELECT} AND g.user_id = $1 AND g.client_id = $2`, [
      userId,
      clientId,
    ]);
    return rows[0] === undefined ? undefined : toGrant(rows[0]);
  }

  /** Live grants of one user, or of everyone when `userId` is undefined, newest first. */
  async list(userId: string | undefined): Promise<Grant[]> {
    const { rows } =
      userId === undefined
        ? await this.pool.query<GrantRow>(`${SELECT} ORDER BY g.created_at DESC`)
        : await this.pool.query<GrantRow>(`${SELECT} AND g.user_id = $1 ORDER BY g.created_at DESC`, [userId]);
    return rows.map(toGrant);
  }

  /**
   * Records consent: creates the grant, or sets the live one to exactly `scope` and
   * `resources` (what the person granted; working out `resources` is the caller's job).
   * Returns the grant id.
   */
  async upsert(input: {
    userId: string;
    clientId: string;
    clientName: string;
    scope: string;
    resources: readonly string[];
  }): Promise<string> {
    const { rows } = await this.pool.query<{ id: string }>(
      `INSERT INTO oauth_grants (id, user_id, client_id, client_name, scope, resources) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (user_id, client_id) WHERE revoked_at IS NULL
       DO UPDATE SET scope = EXCLUDED.scope, resources = EXCLUDED.resources, client_name = EXCLUDED.client_name,
                     updated_at = now()
       RETURNING id`,
      [randomUUID(), input.userId, input.clientId, input.clientName, input.scope, [...input.resources]],
    );
    const id = rows[0]?.id;
    if (id === undefined) throw new Error('grant upsert returned nothing');
    return id;
  }

  /** Whether the grant is live (not revoked). */
  async isLive(grantId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM oauth_grants WHERE id = $1 AND revoked_at IS NULL', [
      grantId,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** Marks the grant used now (the authorizations page's `lastUsedAt`). */
  async touch(grantId: string): Promise<void> {
    await this.pool.query('UPDATE oauth_grants SET last_used_at = now() WHERE id = $1', [grantId]);
  }

  /**
   * Revokes the live grants of `clientId` for `userId` (every user when
   * undefined) and their refresh tokens.
   *
   * @returns the ids of the grants revoked
   */
  async revoke(clientId: string, userId: string | undefined): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `UPDATE oauth_grants SET revoked_at = now()
        WHERE client_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR user_id = $2::uuid) RETURNING id`,
      [clientId, userId ?? null],
    );
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) {
      await this.pool.query(
        'UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE grant_id = ANY($1::uuid[]) AND revoked_at IS NULL',
        [ids],
      );
    }
    return ids;
  }
}

function toGrant(row: GrantRow): Grant {
  return {
    id: row.id,
    userId: row.user_id,
    username: row.username,
    clientId: row.client_id,
    clientName: row.client_name,
    scope: row.scope,
    resources: row.resources,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    clientCreatedAt: row.client_created_at?.toISOString() ?? null,
    tokenCount: Number(row.token_count),
  };
}
