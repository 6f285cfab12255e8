import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { ConfigError } from '../config/config';
import { createLogger } from '../logging/logger';
import { migrateWithAdmin, serviceRoleOf } from './service-role';

/**
 * Least-privilege roles (docs/security.md): against the real PostgreSQL, two
 * services' roles each get their own schema only, created by the admin
 * connection. (This machine trusts local connections, so passwords are not
 * what is tested here; rights are.)
 */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const logger = createLogger({ name: 'service-role-test', level: 'silent' });
const id = randomBytes(4).toString('hex');
const services = ['a', 'b'].map((s) => ({
  role: `svc_${id}_${s}`,
  schema: `svc_${id}_${s}_schema`,
}));

function urlOf(role: string, password: string): string {
  const url = new URL(ADMIN_URL);
  url.username = role;
  url.password = password;
  return url.toString();
}

const MIGRATIONS = [
  { id: '001', sql: 'CREATE TABLE secrets (id serial PRIMARY KEY, value text NOT NULL)' },
  { id: '002', sql: "INSERT INTO secrets (value) VALUES ('only-mine')" },
];

const pools: Pool[] = [];
function poolAs(role: string, schema: string): Pool {
  const pool = new Pool({ connectionString: urlOf(role, 'pw'), options: `-c search_path=${schema}`, max: 1 });
  pools.push(pool);
  return pool;
}

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  const admin = new Pool({ connectionString: ADMIN_URL, max: 1 });
  for (const { role, schema } of services) {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP OWNED BY "${role}"`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS "${role}"`);
  }
  await admin.end();
});

describe('migrateWithAdmin', () => {
  beforeAll(async () => {
    for (const { role, schema } of services) {
      const opts = { adminUrl: ADMIN_URL, databaseUrl: urlOf(role, 'pw'), schema, migrations: MIGRATIONS, logger };
      await migrateWithAdmin(opts);
      await migrateWithAdmin(opts); // every replica runs it at start: idempotent
    }
  });

  it('creates a login role that reads and writes its own tables but creates nothing', async () => {
    const [a] = services;
    const pool = poolAs(a?.role ?? '', a?.schema ?? '');
    expect((await pool.query('SELECT value FROM secrets')).rows).toEqual([{ value: 'only-mine' }]);
    await pool.query("INSERT INTO secrets (value) VALUES ('more')");
    await pool.query("UPDATE secrets SET value = 'changed' WHERE value = 'more'");
    await pool.query("DELETE FROM secrets WHERE value = 'changed'");
    await expect(pool.query('CREATE TABLE extra (x int)')).rejects.toThrow(/permission denied/);
    await expect(pool.query('DROP TABLE secrets')).rejects.toThrow(/must be owner/);
    const owner = await pool.query<{ owner: string }>(
      'SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = $1',
      [a?.schema],
    );
    expect(owner.rows[0]?.owner).not.toBe(a?.role);
  });

  it("gives a role no right on another service's schema", async () => {
    const [a, b] = services;
    const pool = poolAs(a?.role ?? '', a?.schema ?? '');
    await expect(pool.query(`SELECT value FROM "${b?.schema ?? ''}".secrets`)).rejects.toThrow(/permission denied/);
    await expect(pool.query(`INSERT INTO "${b?.schema ?? ''}".secrets (value) VALUES ('x')`)).rejects.toThrow(
      /permission denied/,
    );
  });

  it('refuses a DATABASE_URL without its own user, or with the admin user', async () => {
    const base = { adminUrl: ADMIN_URL, schema: 'unused', migrations: MIGRATIONS, logger };
    const noUser = new URL(ADMIN_URL);
    noUser.username = '';
    await expect(migrateWithAdmin({ ...base, databaseUrl: noUser.toString() })).rejects.toThrow(ConfigError);
    await expect(migrateWithAdmin({ ...base, databaseUrl: ADMIN_URL })).rejects.toThrow(/not the admin user/);
  });

  it('reads the role and password from a URL, decoded', () => {
    expect(serviceRoleOf('postgres://dagu_run:p%40ss@db:5432/dagu')).toEqual({ role: 'dagu_run', password: 'p@ss' });
  });
});
