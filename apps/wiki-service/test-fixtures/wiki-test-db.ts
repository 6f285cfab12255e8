import { randomBytes } from 'node:crypto';
import type { Principal } from '@dagu-mcp/contracts';
import { createLogger, createPool, migrate, type Logger, type Pool } from '@dagu-mcp/runtime';
import { WIKI_MIGRATIONS } from '../src/db/migrations';

/**
 * The integration tier's database (CONTRIBUTING §10): the real PostgreSQL
 * `test` database, one random schema per test file, migrated like the
 * service migrates on start, and dropped afterwards.
 */

/** `DATABASE_URL` of the integration tier; the local `test` database unless told otherwise. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The bus Redis of the integration tier. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A silent logger for tests. */
export const TEST_LOGGER: Logger = createLogger({ name: 'wiki-service-test', level: 'silent' });

/** Principals of every role the tests need. */
export const DEVELOPER: Principal = { id: 'u-dev', subject: 'dana', role: 'developer', credentialType: 'api_key' };
export const VIEWER: Principal = { id: 'u-view', subject: 'vic', role: 'viewer', credentialType: 'api_key' };

/** A migrated schema of its own and the pool bound to it. */
export interface TestDb {
  readonly schema: string;
  readonly pool: Pool;
  /** Closes the pool and drops the schema. */
  drop(): Promise<void>;
}

/**
 * Creates and migrates `wiki_<label>_<random>` in the test database.
 *
 * @param label a short tag naming the test file, for whoever looks at the database meanwhile
 */
export async function createTestDb(label: string): Promise<TestDb> {
  const schema = `wiki_${label}_${randomBytes(4).toString('hex')}`;
  const pool = createPool({ url: TEST_DATABASE_URL, schema, max: 12, logger: TEST_LOGGER });
  await migrate(pool, schema, WIKI_MIGRATIONS);
  return {
    schema,
    pool,
    async drop() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** A deadline `ms` from now (epoch ms), as a bus request carries it. */
export function deadlineIn(ms: number): number {
  return Date.now() + ms;
}
