import type { HandlerContext } from '@dagu-mcp/bus';
import { DaguError } from '@dagu-mcp/contracts';
import { createDagHandlers } from '../dag-service';
import { createTestSchema, type TestSchema } from '../../test-fixtures/pg-test-schema';
import { dagYaml, rejectionOf, withHandlerContext } from '../../test-fixtures/handler-context';

/**
 * The dag-service handlers against the real PostgreSQL, each called with a
 * real handler context: spec 022 preview/apply replies, spec 021 `dag` and
 * `dag_spec` models, and the 036 not-found error with `didYouMean`.
 */
let db: TestSchema;
let handlers: ReturnType<typeof createDagHandlers>;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
  db = await createTestSchema('handlers');
  handlers = createDagHandlers({ pool: db.pool, replica: 'test-replica' });
});

afterAll(async () => {
  await db.drop();
});

const countRows = async (): Promise<number> => (await db.pool.query('SELECT name FROM dags')).rowCount ?? 0;

describe('dag.validate', () => {
  it('validates without writing: valid with the normalized model, or invalid with errors', async () => {
    const valid = await withHandlerContext((ctx) =>
      handlers['dag.validate']({ name: 'preview', spec: dagYaml() }, ctx),
    );
    expect(valid).toMatchObject({ valid: true, errors: [], dag: { name: 'preview', steps: [{ name: 'step1' }] } });
    const invalid = await withHandlerContext((ctx) =>
      handlers['dag.validate']({ name: 'preview', spec: 'steps:\n  - name: [\n' }, ctx),
    );
    expect(invalid.valid).toBe(false);
    expect(invalid.errors[0]).toMatch(/^invalid YAML: /);
    expect(await countRows()).toBe(0);
  });
});

describe('dag.upsert', () => {
  it('does not write an invalid spec: valid false, applied false', async () => {
    const reply = await withHandlerContext((ctx) =>
      handlers['dag.upsert'](
        { name: 'broken', spec: 'steps:\n  - name: a\n    depends: [missing]\n    run: echo\n' },
        ctx,
      ),
    );
    expect(reply).toEqual({
      valid: false,
      errors: [expect.stringContaining('missing')],
      applied: false,
      stored: false,
    });
    expect(await countRows()).toBe(0);
  });

  it('creates, then updates, a valid DAG', async () => {
    const created = await withHandlerContext((ctx) =>
      handlers['dag.upsert']({ name: 'nightly-report', spec: dagYaml() }, ctx),
    );
    expect(created).toMatchObject({
      valid: true,
      errors: [],
      applied: true,
      created: true,
      updated: false,
      version: 1,
    });
    expect(created.dag).toMatchObject({ name: 'nightly-report' });
    const updated = await withHandlerContext((ctx) =>
      handlers['dag.upsert']({ name: 'nightly-report', spec: dagYaml({ description: 'v2' }) }, ctx),
    );
    expect(updated).toMatchObject({
      applied: true,
      created: false,
      updated: true,
      version: 2,
      dag: { description: 'v2' },
    });
  });

  it('refuses to start an apply whose deadline has passed, and writes nothing', async () => {
    const error = await rejectionOf(
      withHandlerContext((ctx) => handlers['dag.upsert']({ name: 'late-dag', spec: dagYaml() }, ctx), -1),
    );
    expect(error).toMatchObject({ code: 'resource_unavailable' });
    const rows = await db.pool.query("SELECT 1 FROM dags WHERE name = 'late-dag'");
    expect(rows.rowCount).toBe(0);
  });

  it('refuses a DAG name that breaks dagu-model §2', async () => {
    const error = await rejectionOf(
      withHandlerContext((ctx) => handlers['dag.upsert']({ name: 'a b', spec: dagYaml() }, ctx)),
    );
    expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'name' });
  });
});

describe('dag.get and dag.spec', () => {
  const spec = `# exact bytes\r\ndescription: Weekly\nschedule: "CRON_TZ=UTC 0 6 * * 1"\nsteps:\n  - run: echo hi   \n\n`;

  beforeAll(async () => {
    await withHandlerContext((ctx) => handlers['dag.upsert']({ name: 'weekly-report', spec }, ctx));
  });

  it('get returns the DAG detail model', async () => {
    const detail = await withHandlerContext((ctx) => handlers['dag.get']({ name: 'weekly-report' }, ctx));
    expect(detail).toMatchObject({
      name: 'weekly-report',
      specUri: 'dagu://dags/weekly-report/spec',
      suspended: false,
      description: 'Weekly',
      labels: [],
      schedule: ['CRON_TZ=UTC 0 6 * * 1'],
      version: 1,
      dag: { name: 'weekly-report', description: 'Weekly' },
    });
    expect(detail.createdAt).toMatch(ISO_MS);
    expect(detail.updatedAt).toMatch(ISO_MS);
    expect(detail.nextRun).toMatch(ISO_MS);
    expect(new Date(detail.nextRun ?? '').getUTCDay()).toBe(1);
  });

  it('spec returns the YAML exactly as applied, with no current errors', async () => {
    const reply = await withHandlerContext((ctx) => handlers['dag.spec']({ name: 'weekly-report' }, ctx));
    expect(reply).toEqual({ name: 'weekly-report', mimeType: 'application/yaml', spec, errors: [] });
  });

  it('spec reports the current validation errors of a stored YAML that no longer validates', async () => {
    await db.pool.query("UPDATE dags SET spec = 'steps: []' WHERE name = 'weekly-report'");
    const reply = await withHandlerContext((ctx) => handlers['dag.spec']({ name: 'weekly-report' }, ctx));
    expect(reply.errors).toEqual([expect.stringContaining('steps')]);
    await db.pool.query('UPDATE dags SET spec = $1 WHERE name = $2', [spec, 'weekly-report']);
  });

  it.each(['dag.get', 'dag.spec'] as const)(
    '%s of an unknown DAG is resource_not_found with didYouMean',
    async (op) => {
      const handler = handlers[op];
      const error = await rejectionOf(withHandlerContext(async (ctx) => handler({ name: 'weekly-reprot' }, ctx)));
      expect(error).toBeInstanceOf(DaguError);
      expect(error instanceof DaguError ? error.toServiceError() : undefined).toEqual({
        code: 'resource_not_found',
        message: 'DAG "weekly-reprot" does not exist.',
        details: { didYouMean: ['weekly-report'] },
      });
    },
  );

  it('suggests up to 3 names, substring matches included, and none when nothing is close', async () => {
    const report = await rejectionOf(withHandlerContext((ctx) => handlers['dag.get']({ name: 'report' }, ctx)));
    expect(report).toMatchObject({ details: { didYouMean: ['nightly-report', 'weekly-report'] } });
    const far = await rejectionOf(withHandlerContext((ctx) => handlers['dag.get']({ name: 'zzzzzzzz' }, ctx)));
    expect(far).toMatchObject({ code: 'resource_not_found' });
    expect(far).toMatchObject({ details: undefined });
  });
});

describe('dag.setSuspended and dag.delete (REST DAG routes)', () => {
  it('suspends and resumes a DAG, then deletes it; unknown names are resource_not_found', async () => {
    await withHandlerContext((ctx) => handlers['dag.upsert']({ name: 'to-suspend', spec: dagYaml() }, ctx));
    const suspended = await withHandlerContext((ctx) =>
      handlers['dag.setSuspended']({ name: 'to-suspend', suspended: true }, ctx),
    );
    expect(suspended).toMatchObject({ name: 'to-suspend', suspended: true });
    const resumed = await withHandlerContext((ctx) =>
      handlers['dag.setSuspended']({ name: 'to-suspend', suspended: false }, ctx),
    );
    expect(resumed.suspended).toBe(false);
    expect(await withHandlerContext((ctx) => handlers['dag.delete']({ name: 'to-suspend' }, ctx))).toEqual({
      name: 'to-suspend',
      deleted: true,
    });
    const gone = await rejectionOf(withHandlerContext((ctx) => handlers['dag.delete']({ name: 'to-suspend' }, ctx)));
    expect(gone).toBeInstanceOf(DaguError);
    expect((gone as DaguError).code).toBe('resource_not_found');
  });

  it('deletes nothing past the deadline', async () => {
    await withHandlerContext((ctx) => handlers['dag.upsert']({ name: 'keep-me', spec: dagYaml() }, ctx));
    const late = await rejectionOf(withHandlerContext((ctx) => handlers['dag.delete']({ name: 'keep-me' }, ctx), -1));
    expect((late as DaguError).code).toBe('resource_unavailable');
    expect((await db.pool.query("SELECT 1 FROM dags WHERE name = 'keep-me'")).rowCount).toBe(1);
  });
});

describe('role re-check of every mutation (dagu-model §9, docs/security.md)', () => {
  const as = (role: 'developer' | 'operator' | 'viewer') =>
    ({ id: `u-${role}`, subject: role, role, credentialType: 'api_key' }) as const;

  it('refuses dag.upsert, dag.delete and dag.setSuspended below developer, whatever the caller checked, and writes nothing', async () => {
    await withHandlerContext((ctx) => handlers['dag.upsert']({ name: 'guarded', spec: dagYaml() }, ctx));
    const before = await db.pool.query('SELECT name, version, suspended FROM dags ORDER BY name');
    for (const role of ['operator', 'viewer'] as const) {
      const calls: Array<(ctx: HandlerContext) => Promise<unknown>> = [
        (ctx) => handlers['dag.upsert']({ name: 'sneaky', spec: dagYaml() }, ctx),
        (ctx) => handlers['dag.delete']({ name: 'guarded' }, ctx),
        (ctx) => handlers['dag.setSuspended']({ name: 'guarded', suspended: true }, ctx),
      ];
      for (const call of calls) {
        const error = await rejectionOf(withHandlerContext(call, 5000, as(role)));
        expect(error).toBeInstanceOf(DaguError);
        expect(error).toMatchObject({ code: 'unauthorized' });
      }
    }
    expect((await db.pool.query('SELECT name, version, suspended FROM dags ORDER BY name')).rows).toEqual(before.rows);
    const applied = await withHandlerContext(
      (ctx) => handlers['dag.setSuspended']({ name: 'guarded', suspended: true }, ctx),
      5000,
      as('developer'),
    );
    expect(applied).toMatchObject({ name: 'guarded' });
  });
});
