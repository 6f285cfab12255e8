import { randomBytes } from 'node:crypto';
import { createLogger, createPool, migrate, type Pool } from '@dagu-mcp/runtime';
import { GATEWAY_MIGRATIONS } from '../db/migrations';

/**
 * Test support for the auth repositories' integration tests: the real
 * PostgreSQL, a schema of its own per test file with the gateway's
 * migrations applied, dropped again by `close()`.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A migrated gateway schema of its own. */
export interface GatewayTestDb {
  readonly pool: Pool;
  readonly schema: string;
  close(): Promise<void>;
}

/** Creates a random schema `<label>_<hex>`, applies the gateway's migrations, and returns a pool on it. */
export async function openGatewayTestDb(label: string): Promise<GatewayTestDb> {
  const schema = `${label}_${randomBytes(4).toString('hex')}`;
  const logger = createLogger({ name: 'auth-test', level: 'silent' });
  const pool = createPool({ url: TEST_DATABASE_URL, schema, max: 2, logger });
  await migrate(pool, schema, GATEWAY_MIGRATIONS);
  return {
    pool,
    schema,
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
