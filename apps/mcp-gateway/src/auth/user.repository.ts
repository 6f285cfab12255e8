import { randomUUID } from 'node:crypto';
import { isUniqueViolation, type Pool } from '@dagu-mcp/runtime';
import { DaguError, RoleSchema, type Role } from '@dagu-mcp/contracts';

/** A user as the API shows it (never the password hash). */
export interface User {
  readonly id: string;
  readonly username: string;
  readonly role: Role;
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface UserRow {
  id: string;
  username: string;
  role: string;
  password_hash: string;
  token_version: number;
  created_at: Date;
  updated_at: Date;
}

function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    role: RoleSchema.parse(row.role),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Users of `AUTH_MODE=builtin`, in the gateway's schema. */
export class UserRepository {
  constructor(private readonly pool: Pool) {}

  /** The user, its password hash and token version, or undefined. */
  async findByUsername(
    username: string,
  ): Promise<{ user: User; passwordHash: string; tokenVersion: number } | undefined> {
    const { rows } = await this.pool.query<UserRow>('SELECT * FROM users WHERE username = $1', [username]);
    const row = rows[0];
    return row === undefined
      ? undefined
      : { user: toUser(row), passwordHash: row.password_hash, tokenVersion: row.token_version };
  }

  /**
   * What a login token is checked against on use (docs/security.md "Role
   * boundaries"): the user's live role and name, and the token version a
   * password reset bumps. Undefined when the user no longer exists.
   */
  async findAuthState(id: string): Promise<{ user: User; tokenVersion: number } | undefined> {
    if (!UUID.test(id)) return undefined;
    const { rows } = await this.pool.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    const row = rows[0];
    return row === undefined ? undefined : { user: toUser(row), tokenVersion: row.token_version };
  }

  async findById(id: string): Promise<User | undefined> {
    const { rows } = await this.pool.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    const row = rows[0];
    return row === undefined ? undefined : toUser(row);
  }

  async list(): Promise<User[]> {
    const { rows } = await this.pool.query<UserRow>('SELECT * FROM users ORDER BY username');
    return rows.map(toUser);
  }

  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM users');
    return Number(rows[0]?.n ?? 0);
  }

  /** @throws DaguError `conflict` when the username is taken */
  async create(input: { username: string; role: Role; passwordHash: string }): Promise<User> {
    try {
      const { rows } = await this.pool.query<UserRow>(
        'INSERT INTO users (id, username, role, password_hash) VALUES ($1, $2, $3, $4) RETURNING *',
        [randomUUID(), input.username, input.role, input.passwordHash],
      );
      const row = rows[0];
      if (row === undefined) throw new Error('insert returned no row');
      return toUser(row);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new DaguError('conflict', `User ${input.username} already exists.`, { field: 'username' });
      throw err;
    }
  }

  /**
   * Updates role and/or password; undefined when the user does not exist. A
   * new password bumps `token_version`, which ends every login token issued
   * before it.
   */
  async update(id: string, change: { role?: Role; passwordHash?: string }): Promise<User | undefined> {
    const { rows } = await this.pool.query<UserRow>(
      `UPDATE users SET role = COALESCE($2, role), password_hash = COALESCE($3, password_hash),
         token_version = token_version + CASE WHEN $3::text IS NULL THEN 0 ELSE 1 END, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, change.role ?? null, change.passwordHash ?? null],
    );
    const row = rows[0];
    return row === undefined ? undefined : toUser(row);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM users WHERE id = $1', [id]);
    return (result.rowCount ?? 0) > 0;
  }
}
