import { randomBytes } from 'node:crypto';
import { createLogger, createPool, migrate, type Pool } from '@dagu-mcp/runtime';
import { DAG_MIGRATIONS } from '../src/db/migrations';

/**
 * A throwaway PostgreSQL schema per test file (CONTRIBUTING §10: integration
 * tests run against the real PostgreSQL, each in a schema of its own, and
 * clean up). The dag-service migrations are applied into it, exactly as the
 * service applies them on start.
 */

/** The PostgreSQL the integration tier uses (trust auth, database `test`) unless TEST_DATABASE_URL says otherwise. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A migrated schema and a pool whose search path is that schema. */
export interface TestSchema {
  readonly schema: string;
  readonly pool: Pool;
  /** Drops the schema (CASCADE) and closes the pool. Idempotent. */
  drop(): Promise<void>;
}

/** A new random schema name, e.g. `test_dag_list_1a2b3c4d` (lower case: used unquoted in psql by hand). */
export function randomSchemaName(label: string): string {
  return `test_dag_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
}

/**
 * Creates and migrates a schema of its own.
 *
 * @param label - part of the schema name, for finding leftovers.
 * @param poolSize - connections of the pool; default 12 (the concurrency tests need more than one).
 */
export async function createTestSchema(label: string, poolSize = 12): Promise<TestSchema> {
  const schema = randomSchemaName(label);
  const logger = createLogger({ name: 'dag-service-test', level: 'silent' });
  const pool = createPool({ url: TEST_DATABASE_URL, schema, max: poolSize, logger });
  await migrate(pool, schema, DAG_MIGRATIONS);
  let dropped = false;
  return {
    schema,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      try {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await pool.end();
      }
    },
  };
}
