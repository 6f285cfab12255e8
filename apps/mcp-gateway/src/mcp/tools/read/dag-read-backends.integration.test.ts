import { randomBytes } from 'node:crypto';
import { BusClient, ServiceWorker } from '@dagu-mcp/bus';
import { ANONYMOUS_PRINCIPAL, dagOps, defineOps, type DagListReply } from '@dagu-mcp/contracts';
import { parseReadInput } from './read-input';
import { createDagReadBackends } from './dag-read-backends';
import { deleteKeysWithPrefix, TEST_REDIS_URL } from '../../../../../../packages/bus/test-fixtures/bus-test-env';

/**
 * `dagu_read dags` against a dag-service older than the gateway (a rolling
 * upgrade): its workers know `dag.list` but not `dag.listIfChanged`,
 * and the page still arrives, over the real bus.
 */
const REDIS_URL = TEST_REDIS_URL;
const prefix = `test-dagread-${randomBytes(4).toString('hex')}`;
const page: DagListReply = {
  items: [{ name: 'old', uri: 'dagu://dags/old/spec', suspended: false, labels: [], schedule: [], updatedAt: 'x' }],
  pagination: { page: 1, perPage: 50, total: 1, totalPages: 1 },
};
const asked: unknown[] = [];
const oldDagService = new ServiceWorker({
  service: 'dag',
  catalog: defineOps({ 'dag.list': dagOps['dag.list'] }),
  redisUrl: REDIS_URL,
  prefix,
  handlers: {
    'dag.list': async (payload) => {
      asked.push(payload);
      return page;
    },
  },
});
const bus = new BusClient({ redisUrl: REDIS_URL, prefix, defaultTimeoutMs: 5000 });

beforeAll(async () => {
  await Promise.all([oldDagService.start(), bus.start()]);
});

afterAll(async () => {
  await bus.close();
  await oldDagService.close();
  await deleteKeysWithPrefix(REDIS_URL, prefix);
});

test('dags falls back to dag.list when dag-service does not know dag.listIfChanged', async () => {
  const { dags } = createDagReadBackends(bus);
  const request = parseReadInput({ target: 'dags', query: 'name=ol&perPage=5' }, {});
  await expect(dags(request, ANONYMOUS_PRINCIPAL)).resolves.toEqual(page);
  await expect(dags(request, ANONYMOUS_PRINCIPAL)).resolves.toEqual(page);
  expect(asked).toEqual([
    { name: 'ol', perPage: 5 },
    { name: 'ol', perPage: 5 },
  ]);
});
