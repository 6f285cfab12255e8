import { ConfigError } from '../config/config';
import type { Logger } from '../logging/logger';
import { migrate, type Migration } from './migrations';
import { createPool } from './pool';

/**
 * Least-privilege database access (docs/security.md "Step isolation and
 * secrets at rest"): a service connects as its own role (the user of its
 * `DATABASE_URL`) with rights on its own schema only. The role, the schema
 * and the tables are created by a privileged connection (`DATABASE_ADMIN_URL`)
 * used at start for this and the migrations only, then closed; the service's
 * role never creates anything.
 *
 * What the role gets: `USAGE` on its schema; `SELECT, INSERT, UPDATE, DELETE`
 * on its tables and `USAGE, SELECT, UPDATE` on its sequences (granted again
 * after every migration run). The schema belongs to the admin role, and
 * `PUBLIC` loses every right on it, so no other service's role reads it.
 */

/** The service role named by a `DATABASE_URL`: user and password. */
export function serviceRoleOf(databaseUrl: string): { role: string; password: string } {
  const url = new URL(databaseUrl);
  return { role: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * Creates (or updates the password of) the service's role, migrates its
 * schema and grants the role its rights, over `adminUrl`; safe to run from
 * every replica at once (advisory locks).
 *
 * @throws ConfigError when `databaseUrl` names no user, or the admin's own user
 * @throws the PostgreSQL error when the admin connection lacks rights (CREATEROLE, CREATE on the database)
 */
export async function migrateWithAdmin(opts: {
  adminUrl: string;
  databaseUrl: string;
  schema: string;
  migrations: readonly Migration[];
  logger: Logger;
}): Promise<void> {
  const { role, password } = serviceRoleOf(opts.databaseUrl);
  const admin = serviceRoleOf(opts.adminUrl).role;
  if (role === '' || role === admin) {
    throw new ConfigError(
      "Invalid configuration: with DATABASE_ADMIN_URL, DATABASE_URL must name the service's own role " +
        `(postgres://<role>:<password>@…), not ${role === '' ? 'no user' : `the admin user ${admin}`}`,
    );
  }
  const pool = createPool({ url: opts.adminUrl, schema: opts.schema, max: 2, logger: opts.logger });
  try {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`role:${role}`]);
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      const pass = password === '' ? '' : ` PASSWORD ${literal(password)}`;
      if (exists.rowCount === 0) await client.query(`CREATE ROLE ${ident(role)} LOGIN NOINHERIT${pass}`);
      else if (pass !== '') await client.query(`ALTER ROLE ${ident(role)}${pass}`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    await migrate(pool, opts.schema, opts.migrations, opts.logger);
    const schema = ident(opts.schema);
    await pool.query(
      [
        `REVOKE ALL ON SCHEMA ${schema} FROM PUBLIC`,
        `GRANT USAGE ON SCHEMA ${schema} TO ${ident(role)}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${ident(role)}`,
        `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${ident(role)}`,
      ].join('; '),
    );
    opts.logger.info({ schema: opts.schema, role }, 'schema migrated and granted to the service role');
  } finally {
    await pool.end();
  }
}
