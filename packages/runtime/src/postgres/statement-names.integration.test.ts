import { randomBytes } from 'node:crypto';
import { createLogger } from '../logging/logger';
import { createPool, type Pool } from './pool';
import { StatementNames, withStatementName } from './statement-names';

/**
 * Named statements (issue 28), against the machine's PostgreSQL in a schema
 * of their own: each pool has one connection, so `pg_prepared_statements`
 * (per session) shows exactly what this pool's connection prepared.
 */
const URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const logger = createLogger({ name: 'statement-names-test', level: 'silent' });
const schema = `stmt_${randomBytes(4).toString('hex')}`;
const pools: Pool[] = [];

function onePool(preparedStatements?: number): Pool {
  const pool = createPool({ url: URL, schema, max: 1, logger, preparedStatements });
  pools.push(pool);
  return pool;
}

async function prepared(pool: Pool): Promise<string[]> {
  const result = await pool.query<{ statement: string }>(
    'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time',
  );
  return result.rows.map((r) => r.statement);
}

beforeAll(async () => {
  const admin = onePool(0);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.items (id int PRIMARY KEY, label text NOT NULL)`);
  await admin.query(`INSERT INTO ${schema}.items VALUES (1, 'one'), (2, 'two')`);
});

afterAll(async () => {
  await pools[0]?.query(`DROP SCHEMA ${schema} CASCADE`);
  await Promise.all(pools.map((p) => p.end()));
});

describe('named statements', () => {
  it('prepares a parameterized text once per connection and reuses it; texts without values stay unnamed', async () => {
    const pool = onePool();
    const text = 'SELECT label FROM items WHERE id = $1';
    expect((await pool.query(text, [1])).rows).toEqual([{ label: 'one' }]);
    expect((await pool.query({ text, values: [2] })).rows).toEqual([{ label: 'two' }]);
    const client = await pool.connect();
    try {
      expect((await client.query(text, [1])).rows).toEqual([{ label: 'one' }]);
      await client.query('SELECT count(*) FROM items');
    } finally {
      client.release();
    }
    expect(await prepared(pool)).toEqual([text]);
  });

  it('names at most `preparedStatements` distinct texts; the rest run unnamed and still answer', async () => {
    const pool = onePool(2);
    const texts = [1, 2, 3].map((n) => `SELECT label, ${n} AS n FROM items WHERE id = $1`);
    for (const text of texts) expect((await pool.query(text, [1])).rows[0]).toMatchObject({ label: 'one' });
    expect(await prepared(pool)).toEqual(texts.slice(0, 2));
    // DB_PREPARED_STATEMENTS=0 (a pooler in transaction mode): nothing is named.
    const none = onePool(0);
    for (const text of texts) expect((await none.query(text, [2])).rows[0]).toMatchObject({ label: 'two' });
    expect(await prepared(none)).toEqual([]);
  });

  it('a statement whose result columns changed under it fails once, then runs unnamed for good', async () => {
    const pool = onePool();
    const text = 'SELECT * FROM items WHERE id = $1';
    expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, label: 'one' }]);
    await onePool(0).query(`ALTER TABLE ${schema}.items ADD COLUMN note text`);
    await expect(pool.query(text, [1])).rejects.toThrow(/cached plan must not change result type/);
    expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, label: 'one', note: null }]);
    // pg-pool's callback form meets the same refusal path.
    const viaCallback = await new Promise((resolve, reject) =>
      pool.query(text, [2], (err, res) => (err ? reject(err) : resolve(res.rows))),
    );
    expect(viaCallback).toEqual([{ id: 2, label: 'two', note: null }]);
  });
});

describe('withStatementName', () => {
  const names = new StatementNames(10);
  it('names (text, values) and ({text, values}) calls, keeping a callback last', () => {
    const cb = (): void => undefined;
    const a = withStatementName(['SELECT $1', [1], cb], names);
    expect(a.args).toEqual([{ name: 'dq1', text: 'SELECT $1', values: [1] }, cb]);
    const b = withStatementName([{ text: 'SELECT $1', values: [2], rowMode: 'array' }], names);
    expect(b.args).toEqual([{ name: 'dq1', text: 'SELECT $1', values: [2], rowMode: 'array' }]);
  });

  it('leaves texts without values, named configs and submittables alone', () => {
    for (const args of [
      ['BEGIN; SET LOCAL statement_timeout = 5'],
      ['SELECT 1', []],
      [{ name: 'mine', text: 'SELECT $1', values: [1] }],
      [{ text: 'SELECT $1', values: [1], submit: () => undefined }],
    ]) {
      const out = withStatementName(args, names);
      expect(out.text).toBeUndefined();
      expect(out.args).toBe(args);
    }
  });

  it('never hands a refused text a name again, nor its old name to another text', () => {
    const own = new StatementNames(10);
    expect(own.nameOf('SELECT $1')).toBe('dq1');
    own.refuse('SELECT $1');
    expect(own.nameOf('SELECT $1')).toBeUndefined();
    expect(own.nameOf('SELECT $2')).toBe('dq2');
  });
});
