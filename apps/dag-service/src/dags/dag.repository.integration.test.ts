import { DaguError } from '@dagu-mcp/contracts';
import type { PoolClient } from '@dagu-mcp/runtime';
import { createTestSchema, type TestSchema } from '../../test-fixtures/pg-test-schema';
import { dagYaml, rejectionOf } from '../../test-fixtures/handler-context';
import { COMMIT_MARGIN_MS, DagRepository } from './dag.repository';
import { validateDagChange } from './dag-validation';
import type { DagWrite } from './dag.records';

/**
 * The DAG store against the real PostgreSQL: atomic upsert (spec 022 apply:
 * created vs updated), concurrent applies, and the deadline rule
 * (docs/architecture.md "Request flow": a mutation is never committed after its deadline).
 */
let db: TestSchema;
let repository: DagRepository;

beforeAll(async () => {
  db = await createTestSchema('repository');
  repository = new DagRepository(db.pool);
});

afterAll(async () => {
  await db.drop();
});

function writeOf(name: string, spec: string): DagWrite {
  const { write } = validateDagChange(name, spec);
  if (write === undefined) throw new Error(`test spec for ${name} is invalid`);
  return write;
}

const soon = (): number => Date.now() + 5000;

/** A connection holding the row lock of DAG `name` in an open transaction; the caller ends it and releases. */
async function holdRowLock(name: string): Promise<PoolClient> {
  const holder = await db.pool.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM dags WHERE name = $1 FOR UPDATE', [name]);
  return holder;
}

describe('DagRepository.upsert', () => {
  it('creates, then updates: version 2, created false, spec exactly as given, created_at kept', async () => {
    const first = await repository.upsert(writeOf('create-update', dagYaml({ description: 'one' })), soon());
    expect(first).toMatchObject({ created: true, version: 1 });

    const spec = `# keep me\n${dagYaml({ description: 'two', labels: ['workspace=ops'] })}   \n\n`;
    const second = await repository.upsert(writeOf('create-update', spec), soon());
    expect(second).toMatchObject({ created: false, version: 2 });
    expect(second.createdAt.getTime()).toBe(first.createdAt.getTime());
    expect(second.updatedAt.getTime()).toBeGreaterThanOrEqual(first.updatedAt.getTime());

    const stored = await repository.get('create-update');
    expect(stored).toMatchObject({ spec, version: 2, description: 'two', workspace: 'ops', labels: ['workspace=ops'] });
    expect(stored?.normalized).toMatchObject({ name: 'create-update', description: 'two' });
  });

  it('serializes 10 concurrent applies of one new name: one row, version 10, exactly one created', async () => {
    const writes = Array.from({ length: 10 }, (_, i) => writeOf('concurrent', dagYaml({ description: `writer ${i}` })));
    const outcomes = await Promise.all(writes.map((write) => repository.upsert(write, soon())));
    expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
    expect(outcomes.map((outcome) => outcome.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    const rows = await db.pool.query("SELECT version, description FROM dags WHERE name = 'concurrent'");
    expect(rows.rowCount).toBe(1);
    expect(rows.rows[0]).toMatchObject({ version: 10 });
    // Last writer wins: the stored description is the one of the apply that got version 10.
    const lastIndex = outcomes.findIndex((outcome) => outcome.version === 10);
    expect(rows.rows[0]).toMatchObject({ description: `writer ${lastIndex}` });
  });

  it('writes nothing when the deadline has already passed', async () => {
    const error = await rejectionOf(repository.upsert(writeOf('too-late', dagYaml()), Date.now() - 1));
    expect(error).toBeInstanceOf(DaguError);
    expect(error).toMatchObject({ code: 'resource_unavailable' });
    expect(await repository.get('too-late')).toBeUndefined();
  });

  it(`writes nothing when less than the commit margin (${COMMIT_MARGIN_MS} ms) remains`, async () => {
    const error = await rejectionOf(
      repository.upsert(writeOf('nearly-late', dagYaml()), Date.now() + COMMIT_MARGIN_MS / 2),
    );
    expect(error).toMatchObject({ code: 'resource_unavailable' });
    expect(await repository.get('nearly-late')).toBeUndefined();
  });

  it('never commits an apply that waited past its deadline (blocked on the row lock)', async () => {
    await repository.upsert(writeOf('locked', dagYaml({ description: 'before' })), soon());
    const holder = await holdRowLock('locked');
    try {
      const started = Date.now();
      const error = await rejectionOf(
        repository.upsert(writeOf('locked', dagYaml({ description: 'after' })), Date.now() + 300),
      );
      expect(error).toMatchObject({ code: 'resource_unavailable' });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    // Give a (wrongly) surviving statement time to commit, then check it did not.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await repository.get('locked')).toMatchObject({ version: 1, description: 'before' });
  });
});

describe('DagRepository.setSuspended', () => {
  it('stamps updated_at after the write it waited for (row lock)', async () => {
    await repository.upsert(writeOf('suspend-order', dagYaml({ description: 'one' })), soon());
    const holder = await holdRowLock('suspend-order');
    try {
      // Begins its transaction now, then waits for the row while the holder updates it 50 ms later.
      const suspending = repository.setSuspended('suspend-order', true, soon());
      await new Promise((resolve) => setTimeout(resolve, 50));
      const held = await holder.query<{ updated_at: Date }>(
        "UPDATE dags SET updated_at = clock_timestamp() WHERE name = 'suspend-order' RETURNING updated_at",
      );
      await holder.query('COMMIT');
      expect(await suspending).toBe(true);
      const after = await db.pool.query<{ updated_at: Date }>(
        "SELECT updated_at FROM dags WHERE name = 'suspend-order'",
      );
      expect(after.rows[0]?.updated_at.getTime() ?? 0).toBeGreaterThanOrEqual(
        held.rows[0]?.updated_at.getTime() ?? Number.POSITIVE_INFINITY,
      );
    } finally {
      holder.release();
    }
  });
});

describe('DagRepository reads', () => {
  it('get returns undefined for an unknown name; names are case-sensitive', async () => {
    await repository.upsert(writeOf('Case-Sensitive', dagYaml()), soon());
    expect(await repository.get('case-sensitive')).toBeUndefined();
    expect(await repository.get('Case-Sensitive')).toMatchObject({ name: 'Case-Sensitive', version: 1 });
  });

  it('listNames lists every DAG in code-unit order', async () => {
    const names = await repository.listNames();
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(names).toEqual(expect.arrayContaining(['Case-Sensitive', 'concurrent', 'create-update', 'locked']));
  });
});

describe('PostgreSQL unavailable', () => {
  it('maps a failed connection to resource_unavailable', async () => {
    const { createLogger, createPool } = await import('@dagu-mcp/runtime');
    const pool = createPool({
      url: 'postgres://postgres@127.0.0.1:1/test',
      schema: 'nowhere',
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
    try {
      const error = await rejectionOf(new DagRepository(pool).get('x'));
      expect(error).toMatchObject({ code: 'resource_unavailable' });
    } finally {
      await pool.end();
    }
  });
});
