import { createDagHandlers } from '../dag-service';
import { createTestSchema, type TestSchema } from '../../test-fixtures/pg-test-schema';
import { dagYaml, withHandlerContext } from '../../test-fixtures/handler-context';

/** `dag.schedules` against the real PostgreSQL: what run-service's scheduler reads. */
let db: TestSchema;
let handlers: ReturnType<typeof createDagHandlers>;

beforeAll(async () => {
  db = await createTestSchema('schedules');
  handlers = createDagHandlers({ pool: db.pool, replica: 'test-replica' });
  const apply = (name: string, spec: string) =>
    withHandlerContext((ctx) => handlers['dag.upsert']({ name, spec }, ctx));
  await apply('every-minute', `schedule: "* * * * *"\n${dagYaml()}`);
  await apply('two-crons', `schedule:\n  - "0 1 * * *"\n  - "CRON_TZ=Europe/Paris 30 2 * * 1"\n${dagYaml()}`);
  await apply('unscheduled', dagYaml());
  await apply('paused', `schedule: "*/5 * * * *"\n${dagYaml()}`);
  await withHandlerContext((ctx) => handlers['dag.setSuspended']({ name: 'paused', suspended: true }, ctx));
});

afterAll(async () => {
  await db.drop();
});

describe('dag.schedules', () => {
  it('lists every scheduled DAG by name, suspended ones flagged, without specs by default', async () => {
    const reply = await withHandlerContext((ctx) => handlers['dag.schedules']({}, ctx));
    expect(reply.schedules).toEqual([
      { name: 'every-minute', schedule: ['* * * * *'], suspended: false, version: 1 },
      { name: 'paused', schedule: ['*/5 * * * *'], suspended: true, version: 1 },
      { name: 'two-crons', schedule: ['0 1 * * *', 'CRON_TZ=Europe/Paris 30 2 * * 1'], suspended: false, version: 1 },
    ]);
  });

  it('narrows to names and carries the stored YAML on request', async () => {
    const reply = await withHandlerContext((ctx) =>
      handlers['dag.schedules']({ names: ['every-minute', 'unscheduled', 'missing'], withSpec: true }, ctx),
    );
    expect(reply.schedules).toHaveLength(1);
    expect(reply.schedules[0]).toMatchObject({ name: 'every-minute', spec: expect.stringContaining('* * * * *') });
  });
});
