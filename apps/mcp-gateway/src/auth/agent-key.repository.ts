import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from '@dagu-mcp/runtime';

/** The text every agent key starts with; what tells it from a user's API key. */
export const AGENT_KEY_MARK = 'dagu_agent_';
/** Length of an agent key's lookup prefix: the mark plus 8 characters of the random part. */
export const AGENT_KEY_PREFIX_LENGTH = AGENT_KEY_MARK.length + 8;

/** An agent key as stored and listed (never the key itself). */
export interface AgentKeyRecord {
  readonly id: string;
  readonly prefix: string;
  /** The agent-service id of the agent the key belongs to (a re-created agent of the same slug has another). */
  readonly agentId: string;
  readonly workspace: string;
  readonly agentSlug: string;
  readonly name: string;
  readonly expiresAt: string | null;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly lastUsedAt: string | null;
  /** SHA-256 of the key, hex; never shown. */
  readonly keyHash: string;
  readonly revoked: boolean;
}

interface AgentKeyRow {
  id: string;
  prefix: string;
  key_hash: string;
  agent_id: string;
  workspace: string;
  agent_slug: string;
  name: string;
  expires_at: Date | null;
  created_by: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

function toRecord(row: AgentKeyRow): AgentKeyRecord {
  return {
    id: row.id,
    prefix: row.prefix,
    agentId: row.agent_id,
    workspace: row.workspace,
    agentSlug: row.agent_slug,
    name: row.name,
    expiresAt: row.expires_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    keyHash: row.key_hash,
    revoked: row.revoked_at !== null,
  };
}

/** True for a bearer token shaped like an agent key (the mark), whatever its validity. */
export function isAgentKey(token: string): boolean {
  return token.startsWith(AGENT_KEY_MARK);
}

/**
 * Agent keys in the gateway's schema: `dagu_agent_` + 43
 * base64url characters (256 random bits), stored as a SHA-256 hash and a
 * lookup prefix, each bound to one agent.
 */
export class AgentKeyRepository {
  constructor(private readonly pool: Pool) {}

  /** Creates a key of an agent; returns the record and the key text (shown to the caller once). */
  async create(input: {
    agentId: string;
    workspace: string;
    agentSlug: string;
    name: string;
    expiresAt: Date | null;
    createdBy: string;
  }): Promise<{ record: AgentKeyRecord; key: string }> {
    const key = `${AGENT_KEY_MARK}${randomBytes(32).toString('base64url')}`;
    const { rows } = await this.pool.query<AgentKeyRow>(
      `INSERT INTO agent_keys (id, prefix, key_hash, agent_id, workspace, agent_slug, name, expires_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        randomUUID(),
        key.slice(0, AGENT_KEY_PREFIX_LENGTH),
        createHash('sha256').update(key).digest('hex'),
        input.agentId,
        input.workspace,
        input.agentSlug,
        input.name,
        input.expiresAt,
        input.createdBy,
      ],
    );
    const row = rows[0];
    if (row === undefined) throw new Error('insert returned no row');
    return { record: toRecord(row), key };
  }

  /** The key with this lookup prefix, revoked or not. */
  async findByPrefix(prefix: string): Promise<AgentKeyRecord | undefined> {
    const { rows } = await this.pool.query<AgentKeyRow>('SELECT * FROM agent_keys WHERE prefix = $1', [prefix]);
    const row = rows[0];
    return row === undefined ? undefined : toRecord(row);
  }

  /** The live keys of one agent (by id), newest first. */
  async listForAgent(agentId: string): Promise<AgentKeyRecord[]> {
    const { rows } = await this.pool.query<AgentKeyRow>(
      'SELECT * FROM agent_keys WHERE agent_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC',
      [agentId],
    );
    return rows.map(toRecord);
  }

  /** Revokes a key of an agent; returns its prefix, or undefined when the agent has no live key of this id. */
  async revoke(agentId: string, id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ prefix: string }>(
      `UPDATE agent_keys SET revoked_at = now() WHERE id = $1 AND agent_id = $2 AND revoked_at IS NULL
       RETURNING prefix`,
      [id, agentId],
    );
    return rows[0]?.prefix;
  }

  async touch(id: string): Promise<void> {
    await this.pool.query('UPDATE agent_keys SET last_used_at = now() WHERE id = $1', [id]);
  }
}
