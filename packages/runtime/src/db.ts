import { Pool, type PoolClient } from 'pg';
import type { Logger } from './logger';

export type { Pool, PoolClient };

/**
 * Creates a pg pool whose every connection uses `schema` as search path, with
 * error handlers so an idle client's failure (PostgreSQL restart) is logged
 * instead of crashing the process.
 *
 * @param opts.url     PostgreSQL URL
 * @param opts.schema  the service's own schema (created by migrations)
 * @param opts.max     pool size (default 10)
 */
export function createPool(opts: { url: string; schema: string; max?: number; logger: Logger }): Pool {
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: `-c search_path=${opts.schema},public`,
    connectionTimeoutMillis: 5000,
  });
  pool.on('error', (err) => opts.logger.warn({ err: err.message }, 'idle PostgreSQL client failed'));
  return pool;
}

/**
 * Runs `fn` in a transaction and commits only if `deadline` (epoch ms) has not
 * passed; otherwise rolls back and throws what `onLate` returns. This is how a
 * service never applies a mutation after its deadline (ARCHITECTURE "Request flow").
 *
 * @throws whatever `fn` throws (after ROLLBACK), or `onLate()` when past the deadline
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  opts: { deadline?: number; onLate?: () => Error } = {},
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const remaining = opts.deadline === undefined ? undefined : opts.deadline - Date.now();
    if (remaining !== undefined) {
      // Statements cannot run past the deadline either.
      await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(remaining))}`);
    }
    const result = await fn(client);
    if (opts.deadline !== undefined && Date.now() >= opts.deadline) {
      throw (opts.onLate ?? (() => new Error('deadline passed before commit')))();
    }
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
