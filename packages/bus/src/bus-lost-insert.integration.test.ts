import { BusClient } from './bus-client';
import { ServiceWorker } from './service-worker';
import { CuttingProxy } from '../../runtime/test-fixtures/cutting-proxy';
import { createTestHandlers, testOps } from '../test-fixtures/test-ops';
import {
  deleteKeysWithPrefix,
  randomPrefix,
  settle,
  TEST_HANDOFF_OPTION,
  TEST_PRINCIPAL,
  TEST_REDIS_URL,
  waitFor,
} from '../test-fixtures/bus-test-env';

/**
 * A mutation whose job insert reached Redis but whose answer was lost
 * (Redis went away mid-command). The job may be taken and applied,
 * so the caller must not be told "not sent" (`resource_unavailable` with
 * `details.dependency: "redis"` and no outcome); the call waits for the reply
 * or its deadline like any sent call.
 */
const options = { principal: TEST_PRINCIPAL };

describe('a mutation insert whose answer is lost', () => {
  const prefix = randomPrefix('lost-insert');
  const upstream = new URL(TEST_REDIS_URL);
  const proxy = new CuttingProxy(upstream.hostname, Number(upstream.port || 6379));
  const { handlers, log } = createTestHandlers();
  let client: BusClient;
  // The service reaches Redis directly; only the caller's connections go through the proxy.
  const worker = new ServiceWorker({
    service: 'dag',
    catalog: testOps,
    handlers,
    redisUrl: TEST_REDIS_URL,
    prefix,
    ...TEST_HANDOFF_OPTION,
  });

  beforeAll(async () => {
    const address = await proxy.start();
    client = new BusClient({ redisUrl: `redis://${address}`, prefix, defaultTimeoutMs: 4000, ...TEST_HANDOFF_OPTION });
    await Promise.all([client.start(), worker.start()]);
    // Loads the insert script into Redis, so the cut call's first command is the insert itself.
    await client.call('dag', testOps, 'mutate', { key: 'warm-up', delayMs: 0 }, options);
  });
  afterAll(async () => {
    await client.close();
    await worker.close();
    await proxy.stop();
    await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  });

  it('is not answered "not sent" when the service took and applied it: the caller gets its reply', async () => {
    proxy.cutAfter('lost-answer-1');
    const settled = await settle(
      client.call('dag', testOps, 'mutate', { key: 'lost-answer-1', delayMs: 0 }, { ...options, timeoutMs: 4000 }),
    );
    expect(proxy.cuts).toBe(1);
    expect(settled).toMatchObject({ ok: true, value: { applied: true } });
    expect(log.applied).toContain('lost-answer-1');
  });

  it('a read whose insert lost its answer still fails at once (a read is safe to send again)', async () => {
    await waitFor(() => client.isReady(), 5000, 'the client to reconnect through the proxy');
    proxy.cutAfter('lost-read-1');
    const settled = await settle(client.call('dag', testOps, 'echo', { text: 'lost-read-1' }, options));
    expect(proxy.cuts).toBe(2);
    expect(settled).toMatchObject({ ok: false, error: { code: 'resource_unavailable' } });
    expect(settled.elapsedMs).toBeLessThan(1000);
  });
});
