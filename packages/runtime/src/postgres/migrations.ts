import type { Pool } from 'pg';
import type { Logger } from '../logging/logger';

/** One schema migration: a unique, ordered id and the SQL it runs. */
export interface Migration {
  /** Ordered id, e.g. `001_create_dags`. Applied in ascending order. */
  readonly id: string;
  readonly sql: string;
}

/**
 * Creates `schema` and applies the migrations not yet recorded in
 * `<schema>.schema_migrations`, in id order, each in its own transaction.
 *
 * Safe when several replicas start at once: a transaction-level advisory lock
 * keyed by the schema name serializes them, and the loser sees the winner's
 * records and applies nothing.
 *
 * @returns the ids applied by this call (empty when up to date)
 */
export async function migrate(
  pool: Pool,
  schema: string,
  migrations: readonly Migration[],
  logger?: Logger,
): Promise<string[]> {
  const ordered = [...migrations].sort((a, b) => a.id.localeCompare(b.id));
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${schema}".schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = await client.query<{ id: string }>(`SELECT id FROM "${schema}".schema_migrations`);
    const seen = new Set(done.rows.map((r) => r.id));
    await client.query(`SET LOCAL search_path = "${schema}", public`);
    for (const m of ordered) {
      if (seen.has(m.id)) continue;
      await client.query(m.sql);
      await client.query(`INSERT INTO "${schema}".schema_migrations (id) VALUES ($1)`, [m.id]);
      applied.push(m.id);
      logger?.info({ schema, migration: m.id }, 'migration applied');
    }
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
