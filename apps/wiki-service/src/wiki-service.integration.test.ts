import { randomBytes } from 'node:crypto';
import { BusClient, ServiceWorker } from '@dagu-mcp/bus';
import { DaguError, wikiOps } from '@dagu-mcp/contracts';
import { createAppMetrics } from '@dagu-mcp/runtime';
import { loadServiceConfig } from '@dagu-mcp/service-kit';
import {
  createTestDb,
  DEVELOPER,
  TEST_LOGGER,
  TEST_REDIS_URL,
  VIEWER,
  type TestDb,
} from '../test-fixtures/wiki-test-db';
import { wikiService } from './wiki-service';
import { deleteKeysWithPrefix } from '../../../packages/bus/test-fixtures/bus-test-env';

/**
 * wiki-service over the real bus (BullMQ on the local Redis) and the real
 * PostgreSQL: the op catalog, payload validation on the service side, the
 * principal travelling with each request, and the deadline rule for writes
 * (docs/architecture.md "Request flow").
 */
const prefix = `test-wiki-${randomBytes(4).toString('hex')}`;
let db: TestDb;
let worker: ServiceWorker<typeof wikiOps>;
let client: BusClient;

async function rejection(promise: Promise<unknown>): Promise<DaguError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DaguError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  db = await createTestDb('bus');
  const config = loadServiceConfig({ schema: db.schema, opsPort: 8083 }, {});
  const handlers = wikiService.createHandlers({
    pool: db.pool,
    logger: TEST_LOGGER,
    config,
    replica: 'test-replica',
    metrics: createAppMetrics({ app: 'wiki-service', processMetrics: false }).registry,
  });
  worker = new ServiceWorker({ service: 'wiki', catalog: wikiOps, handlers, redisUrl: TEST_REDIS_URL, prefix });
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 5000 });
  await Promise.all([worker.start(), client.start()]);
});

afterAll(async () => {
  await client?.close();
  await worker?.close();
  await db?.drop();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

describe('wiki-service over the bus', () => {
  const as = { principal: DEVELOPER };

  test('put, get, list, search and delete round-trip with the writer recorded', async () => {
    const content = '---\ntitle: Deploy\ntags: [ops]\n---\nRun deploy.sh\n';
    const written = await client.call(
      'wiki',
      wikiOps,
      'wiki.put',
      { workspace: 'team', path: 'runbooks/deploy', content },
      as,
    );
    expect(written).toMatchObject({
      created: true,
      page: { uri: 'dagu://wiki/team/runbooks%2Fdeploy', updatedBy: 'dana', title: 'Deploy' },
    });

    const page = await client.call('wiki', wikiOps, 'wiki.get', { workspace: 'team', path: 'runbooks/deploy' }, as);
    expect(page).toMatchObject({ id: 'runbooks/deploy', content, mimeType: 'text/markdown' });

    const list = await client.call('wiki', wikiOps, 'wiki.list', { workspace: 'team', flat: true }, as);
    expect(list.items?.map((i) => i.id)).toEqual(['runbooks/deploy']);

    const found = await client.call('wiki', wikiOps, 'wiki.search', { search: 'DEPLOY.SH' }, as);
    expect(found.results[0]?.matches).toEqual([{ line: 5, text: 'Run deploy.sh' }]);

    expect(
      await client.call('wiki', wikiOps, 'wiki.delete', { workspace: 'team', path: 'runbooks/deploy' }, as),
    ).toEqual({
      workspace: 'team',
      path: 'runbooks/deploy',
      version: 1,
    });
    expect(
      (await rejection(client.call('wiki', wikiOps, 'wiki.get', { workspace: 'team', path: 'runbooks/deploy' }, as)))
        .code,
    ).toBe('resource_not_found');
  });

  test('the service re-validates payloads: a bad path or workspace all is invalid_tool_input', async () => {
    const badPath = await client.callRaw('wiki', 'wiki.get', { workspace: 'team', path: '../etc' }, as);
    expect(badPath).toMatchObject({ ok: false, error: { code: 'invalid_tool_input', field: 'path' } });
    const all = await client.callRaw('wiki', 'wiki.put', { workspace: 'all', path: 'a', content: 'x' }, as);
    expect(all).toMatchObject({ ok: false, error: { code: 'invalid_tool_input', field: 'workspace' } });
  });

  test('a viewer is refused writes by the service too (dagu-model §9)', async () => {
    const refused = await rejection(
      client.call('wiki', wikiOps, 'wiki.put', { workspace: 'team', path: 'x', content: 'x' }, { principal: VIEWER }),
    );
    expect(refused.code).toBe('unauthorized');
  });

  test('a write that misses its deadline is answered resource_unavailable and never applied', async () => {
    const holder = await db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', ['dagu-mcp:wiki-page:team/slow']);
      const late = await rejection(
        client.call(
          'wiki',
          wikiOps,
          'wiki.put',
          { workspace: 'team', path: 'slow', content: 'late' },
          { ...as, timeoutMs: 300 },
        ),
      );
      expect(late.code).toBe('resource_unavailable');
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      holder.release();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      (await rejection(client.call('wiki', wikiOps, 'wiki.get', { workspace: 'team', path: 'slow' }, as))).code,
    ).toBe('resource_not_found');
  });
});
