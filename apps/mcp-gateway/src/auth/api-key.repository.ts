import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from '@dagu-mcp/runtime';
import { RoleSchema, type Role } from '@dagu-mcp/contracts';

/** Where an API key is accepted (spec 020 §API-Key Surface). */
export type Surface = 'mcp' | 'rest_api';
export const SURFACES: readonly Surface[] = ['mcp', 'rest_api'];

/** An API key as stored and listed (never the key itself). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly prefix: string;
  readonly name: string;
  readonly role: Role;
  readonly surfaces: Surface[];
  readonly expiresAt: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  /** SHA-256 of the key, hex. Keys are 256-bit random, so a fast hash is enough; never shown. */
  readonly keyHash: string;
  readonly revoked: boolean;
}

interface ApiKeyRow {
  id: string;
  prefix: string;
  key_hash: string;
  name: string;
  role: string;
  surfaces: string[];
  expires_at: Date | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Length of the lookup prefix: `dagu_` plus 8 characters of the random part. */
export const KEY_PREFIX_LENGTH = 13;

/** A new key: `dagu_` + 43 base64url characters (256 random bits). */
export function generateApiKey(): string {
  return `dagu_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 hex of a key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    role: RoleSchema.parse(row.role),
    surfaces: row.surfaces.filter((s): s is Surface => s === 'mcp' || s === 'rest_api'),
    expiresAt: row.expires_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    keyHash: row.key_hash,
    revoked: row.revoked_at !== null,
  };
}

/** API keys in the gateway's schema: stored as a hash plus a short lookup prefix. */
export class ApiKeyRepository {
  constructor(private readonly pool: Pool) {}

  /** Creates a key; returns the record and the key text (shown to the caller once). */
  async create(input: {
    name: string;
    role: Role;
    surfaces: Surface[];
    expiresAt: Date | null;
    createdBy: string;
  }): Promise<{ record: ApiKeyRecord; key: string }> {
    const key = generateApiKey();
    const { rows } = await this.pool.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, prefix, key_hash, name, role, surfaces, expires_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        randomUUID(),
        key.slice(0, KEY_PREFIX_LENGTH),
        hashApiKey(key),
        input.name,
        input.role,
        input.surfaces,
        input.expiresAt,
        input.createdBy,
      ],
    );
    const row = rows[0];
    if (row === undefined) throw new Error('insert returned no row');
    return { record: toRecord(row), key };
  }

  /** The key with this lookup prefix, revoked or not. */
  async findByPrefix(prefix: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE prefix = $1', [prefix]);
    const row = rows[0];
    return row === undefined ? undefined : toRecord(row);
  }

  /** Keys that are not revoked, newest first. */
  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<ApiKeyRow>(
      'SELECT * FROM api_keys WHERE revoked_at IS NULL ORDER BY created_at DESC',
    );
    return rows.map(toRecord);
  }

  /** Revokes a key; returns its prefix, or undefined when no live key has this id. */
  async revoke(id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ prefix: string }>(
      'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING prefix',
      [id],
    );
    return rows[0]?.prefix;
  }

  async touch(id: string): Promise<void> {
    await this.pool.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [id]);
  }
}
