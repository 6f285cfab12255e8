import { join } from 'node:path';
import { BusClient, ServiceWorker } from '@dagu-mcp/bus';
import { dagOps } from '@dagu-mcp/contracts';
import { createDagHandlers } from './dag-service';
import { createTestSchema, type TestSchema } from '../test-fixtures/pg-test-schema';
import { dagYaml, TEST_PRINCIPAL } from '../test-fixtures/handler-context';
import { DEFAULT_SPEC_PARSE_LIMITS, SpecParsers } from './dags/spec-parsers';
import { aliasBombSpec } from '../../../packages/dag-spec/test-fixtures/alias-bomb';
import {
  manyKeysSpec,
  NESTING_ATTACK_ERROR,
  nestingAttackSpec,
} from '../../../packages/dag-spec/test-fixtures/nesting-attack';
import { deleteKeysWithPrefix, errorOf, randomBusPrefix, TEST_REDIS_URL } from '../test-fixtures/bus-test-env';

/**
 * dag-service through the real bus (docs/architecture.md "Request flow" steps 3–5):
 * a BusClient sends typed requests over Redis to a ServiceWorker running the
 * dag-service handlers on the real PostgreSQL; both sides validate with the
 * `dagOps` schemas, and errors keep their code, field and details.
 */
const prefix = randomBusPrefix('dag-service');
const options = { principal: TEST_PRINCIPAL };
let db: TestSchema;
let worker: ServiceWorker<typeof dagOps>;
let client: BusClient;
// Large specs are validated in worker threads running the TypeScript sources (first use compiles them).
const parsers = new SpecParsers({ ...DEFAULT_SPEC_PARSE_LIMITS, budgetMs: 60_000 }, [
  '--require',
  join(__dirname, '..', '..', '..', 'packages', 'bus', 'test-fixtures', 'ts-register.js'),
]);

beforeAll(async () => {
  db = await createTestSchema('bus');
  worker = new ServiceWorker({
    service: 'dag',
    catalog: dagOps,
    handlers: createDagHandlers({ pool: db.pool, replica: 'bus-test' }, {}, parsers),
    redisUrl: TEST_REDIS_URL,
    prefix,
  });
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  await Promise.all([worker.start(), client.start()]);
});

afterAll(async () => {
  await client.close();
  await worker.close();
  await parsers.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  await db.drop();
});

describe('dag-service over the bus', () => {
  it('answers ping', async () => {
    await expect(client.call('dag', dagOps, 'ping', {}, options)).resolves.toMatchObject({
      service: 'dag-service',
      replica: 'bus-test',
    });
  });

  it('previews, applies, then reads, lists and searches a DAG', async () => {
    const spec = dagYaml({ description: 'Bus test', labels: ['workspace=ops'], commands: ['echo over the bus'] });
    const preview = await client.call('dag', dagOps, 'dag.validate', { name: 'bus-dag', spec }, options);
    expect(preview).toMatchObject({ valid: true, errors: [] });

    const applied = await client.call('dag', dagOps, 'dag.upsert', { name: 'bus-dag', spec }, options);
    expect(applied).toMatchObject({ valid: true, applied: true, created: true, updated: false, version: 1 });

    const detail = await client.call('dag', dagOps, 'dag.get', { name: 'bus-dag' }, options);
    expect(detail).toMatchObject({ name: 'bus-dag', specUri: 'dagu://dags/bus-dag/spec', version: 1 });

    const stored = await client.call('dag', dagOps, 'dag.spec', { name: 'bus-dag' }, options);
    expect(stored).toEqual({ name: 'bus-dag', mimeType: 'application/yaml', spec, errors: [] });

    const list = await client.call('dag', dagOps, 'dag.list', { labels: ['workspace=ops'] }, options);
    expect(list.items.map((item) => item.uri)).toEqual(['dagu://dags/bus-dag/spec']);
    expect(list.pagination).toEqual({ page: 1, perPage: 50, total: 1, totalPages: 1 });

    const found = await client.call('dag', dagOps, 'dag.search', { search: 'OVER THE BUS', workspace: 'ops' }, options);
    expect(found).toEqual({
      results: [
        {
          name: 'bus-dag',
          uri: 'dagu://dags/bus-dag/spec',
          matches: [{ line: 5, text: '    run: "echo over the bus"' }],
          hasMoreMatches: false,
        },
      ],
      hasMore: false,
    });
  });

  it('answers an alias bomb valid=false and stores nothing', async () => {
    const spec = aliasBombSpec();
    const expected = {
      valid: false,
      errors: [expect.stringMatching(/^invalid YAML: aliases expand the document to more than \d+ values/)],
      // The expansion has no line of its own (its errorLocations).
      errorLocations: [],
      stored: false,
    };
    await expect(client.call('dag', dagOps, 'dag.validate', { name: 'bomb', spec }, options)).resolves.toEqual(
      expected,
    );
    await expect(client.call('dag', dagOps, 'dag.upsert', { name: 'bomb', spec }, options)).resolves.toMatchObject({
      valid: false,
      errors: expected.errors,
      stored: false,
      applied: false,
    });
    await expect(errorOf(client.call('dag', dagOps, 'dag.get', { name: 'bomb' }, options))).resolves.toMatchObject({
      code: 'resource_not_found',
    });
  });

  it.each([200_000, 500_000])(
    'refuses `steps: ` and %i nested brackets before parsing, and stays free for others',
    async (levels) => {
      const spec = nestingAttackSpec(levels);
      const attack = client.call('dag', dagOps, 'dag.validate', { name: 'nested', spec }, options);
      const other = client.call('dag', dagOps, 'dag.validate', { name: 'other', spec: dagYaml({}) }, options);
      await expect(attack).resolves.toEqual({
        valid: false,
        errors: [NESTING_ATTACK_ERROR],
        errorLocations: [{ index: 0, line: 1, column: 71 }],
        stored: false,
      });
      await expect(other).resolves.toMatchObject({ valid: true });
      await expect(client.call('dag', dagOps, 'dag.upsert', { name: 'nested', spec }, options)).resolves.toMatchObject({
        valid: false,
        errors: [NESTING_ATTACK_ERROR],
        applied: false,
        stored: false,
      });
    },
  );

  it('finds a repeated key among 60 000 (the yaml library alone took minutes)', async () => {
    await expect(
      client.call(
        'dag',
        dagOps,
        'dag.validate',
        { name: 'keys', spec: manyKeysSpec(60_000) },
        { ...options, timeoutMs: 60_000 },
      ),
    ).resolves.toMatchObject({
      valid: false,
      errors: ['invalid YAML: Map keys must be unique at line 60005, column 3'],
      errorLocations: [{ index: 0, line: 60005, column: 3 }],
    });
  });

  it('carries resource_not_found with details.didYouMean back to the caller', async () => {
    const typo = await errorOf(client.call('dag', dagOps, 'dag.spec', { name: 'bus-dga' }, options));
    expect(typo).toMatchObject({
      code: 'resource_not_found',
      message: 'DAG "bus-dga" does not exist.',
      details: { didYouMean: ['bus-dag'] },
    });
    const far = await errorOf(client.call('dag', dagOps, 'dag.get', { name: 'zzzzzzzz' }, options));
    expect(far).toMatchObject({ code: 'resource_not_found', details: undefined });
  });

  it('refuses a DAG name that breaks dagu-model §2 as invalid_tool_input on name', async () => {
    const error = await errorOf(client.call('dag', dagOps, 'dag.get', { name: 'bad name' }, options));
    expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'name' });
  });

  it('carries invalid_tool_input on cursor back to the caller', async () => {
    const error = await errorOf(client.call('dag', dagOps, 'dag.search', { search: 'x', cursor: 'bogus!' }, options));
    expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'cursor' });
  });
});
