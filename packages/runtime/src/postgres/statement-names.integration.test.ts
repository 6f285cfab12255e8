import { randomBytes } from 'node:crypto';
import { createLogger } from '../logging/logger';
import { createPool, withTransaction, type Pool } from './pool';
import { isStaleStatement, StatementNames, withStatementName } from './statement-names';

/**
 * Named statements, against the machine's PostgreSQL in a schema
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
    for (const text of [...texts, ...texts])
      expect((await pool.query(text, [1])).rows[0]).toMatchObject({ label: 'one' });
    expect(await prepared(pool)).toEqual(texts.slice(0, 2));
    // DB_PREPARED_STATEMENTS=0 (a pooler in transaction mode): nothing is named.
    const none = onePool(0);
    for (const text of [...texts, ...texts])
      expect((await none.query(text, [2])).rows[0]).toMatchObject({ label: 'two' });
    expect(await prepared(none)).toEqual([]);
  });

  it('names a text only once it comes back, and never one with more than 64 parameters', async () => {
    const pool = onePool();
    const once = 'SELECT label FROM items WHERE id = $1 AND label IS NOT NULL';
    await pool.query(once, [1]);
    const wide = `SELECT count(*) FROM items WHERE id IN (${Array.from({ length: 65 }, (_, i) => `$${i + 1}`).join(',')})`;
    const ids = Array.from({ length: 65 }, (_, i) => i);
    for (let i = 0; i < 3; i += 1) expect((await pool.query(wide, ids)).rows).toEqual([{ count: '2' }]);
    expect(await prepared(pool)).toEqual([]);
  });

  it('a statement whose result columns changed under it is retried unnamed outside a transaction, and never named again', async () => {
    const pool = onePool();
    const text = 'SELECT * FROM items WHERE id = $1';
    await pool.query(text, [1]);
    expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, label: 'one' }]);
    expect(await prepared(pool)).toEqual([text]);
    await onePool(0).query(`ALTER TABLE ${schema}.items ADD COLUMN note text`);
    // The promise path (a checked-out client, as withTransaction and traced queries use).
    const client = await pool.connect();
    try {
      expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: 'one', note: null }]);
    } finally {
      client.release();
    }
    expect((await pool.query(text, [2])).rows).toEqual([{ id: 2, label: 'two', note: null }]);

    // pg-pool's callback form meets the same retry.
    const other = onePool();
    const viaCallback = 'SELECT * FROM items WHERE id = $1 ORDER BY id';
    await other.query(viaCallback, [1]);
    await other.query(viaCallback, [1]);
    await onePool(0).query(`ALTER TABLE ${schema}.items ADD COLUMN tag text`);
    const rows = await new Promise((resolve, reject) =>
      other.query(viaCallback, [2], (err, res) => (err ? reject(err) : resolve(res.rows))),
    );
    expect(rows).toEqual([{ id: 2, label: 'two', note: null, tag: null }]);

    // Inside a transaction the error stands (the transaction is aborted); the text is unnamed from then on.
    const inTx = onePool();
    const txText = 'SELECT * FROM items WHERE id = $1 AND id > 0';
    await inTx.query(txText, [1]);
    await inTx.query(txText, [1]);
    await onePool(0).query(`ALTER TABLE ${schema}.items DROP COLUMN tag`);
    await expect(withTransaction(inTx, (c) => c.query(txText, [1]))).rejects.toThrow(
      /cached plan must not change result type/,
    );
    expect((await withTransaction(inTx, (c) => c.query(txText, [1]))).rows).toEqual([
      { id: 1, label: 'one', note: null },
    ]);
  });
});

describe('withStatementName', () => {
  const names = new StatementNames(10);
  it('names (text, values) and ({text, values}) calls, keeping a callback last', () => {
    const cb = (): void => undefined;
    expect(withStatementName(['SELECT $1', [0], cb], names).text).toBeUndefined(); // seen once: unnamed
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
    own.nameOf('SELECT $1');
    expect(own.nameOf('SELECT $1')).toBe('dq1');
    own.refuse('SELECT $1');
    expect(own.nameOf('SELECT $1')).toBeUndefined();
    own.nameOf('SELECT $2');
    expect(own.nameOf('SELECT $2')).toBe('dq2');
  });

  it('knows a stale statement by its SQLSTATE and routine, whatever the message language', () => {
    expect(isStaleStatement({ code: '0A000', routine: 'RevalidateCachedQuery', message: 'le plan en cache…' })).toBe(
      true,
    );
    expect(isStaleStatement({ code: '0A000', message: 'cached plan must not change result type' })).toBe(true);
    expect(isStaleStatement({ code: '0A000', routine: 'other', message: 'feature not supported' })).toBe(false);
    expect(isStaleStatement({ code: '42P01', routine: 'RevalidateCachedQuery' })).toBe(false);
  });
});
