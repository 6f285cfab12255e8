import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { BusClient } from './bus-client';
import { ServiceWorker } from './service-worker';
import { queueNameOf } from './bus-protocol';
import { createTestHandlers, sleep, testOps } from '../test-fixtures/test-ops';
import {
  deleteKeysWithPrefix,
  randomPrefix,
  rejectionOf,
  TEST_HANDOFF_OPTION,
  TEST_PRINCIPAL,
  TEST_REDIS_URL,
  waitFor,
} from '../test-fixtures/bus-test-env';

/**
 * The bus against the real Redis: round trips, error mapping, validation on
 * both sides, retries of transient failures, and the deadline rule
 * (docs/architecture.md "Request flow": past its deadline a request is answered
 * `resource_unavailable` and a mutation is never applied afterwards).
 */
const prefix = randomPrefix('bus');
const options = { principal: TEST_PRINCIPAL };
const { handlers, log } = createTestHandlers();
const worker = new ServiceWorker({
  service: 'dag',
  catalog: testOps,
  handlers,
  redisUrl: TEST_REDIS_URL,
  prefix,
  ...TEST_HANDOFF_OPTION,
});
const client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 5000, ...TEST_HANDOFF_OPTION });

beforeAll(async () => {
  await Promise.all([worker.start(), client.start()]);
});

afterAll(async () => {
  await client.close();
  await worker.close();
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
});

describe('BusClient ↔ ServiceWorker', () => {
  it('is ready and pings Redis', async () => {
    expect(client.isReady()).toBe(true);
    expect(worker.isReady()).toBe(true);
    expect(await client.ping()).toBeGreaterThanOrEqual(0);
  });

  it('round-trips a call and passes the principal', async () => {
    await expect(client.call('dag', testOps, 'echo', { text: 'hi' }, options)).resolves.toEqual({
      text: 'hi',
      principalId: 'user-1',
    });
  });

  it('serves many concurrent calls, each with its own reply', async () => {
    const texts = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const replies = await Promise.all(texts.map((text) => client.call('dag', testOps, 'echo', { text }, options)));
    expect(replies.map((reply) => reply.text)).toEqual(texts);
  });

  it('runs up to `concurrency` (16) jobs at once', async () => {
    const started = Date.now();
    const calls = Array.from({ length: 16 }, () => client.call('dag', testOps, 'slow', { ms: 300 }, options));
    await expect(Promise.all(calls)).resolves.toHaveLength(16);
    expect(Date.now() - started).toBeLessThan(1200);
  });

  it("maps the service's DaguError through with code, message and field", async () => {
    const payload = { code: 'resource_not_found', message: 'No DAG named x.', field: 'name' } as const;
    const { error } = await rejectionOf(client.call('dag', testOps, 'fail', payload, options));
    expect(error).toMatchObject({ code: 'resource_not_found', message: 'No DAG named x.', field: 'name' });
  });

  it('rejects an invalid payload before sending it (invalid_tool_input with the field)', async () => {
    const before = log.handled.length;
    const { error } = await rejectionOf(client.call('dag', testOps, 'echo', { text: '' }, options));
    expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'text' });
    await sleep(50);
    expect(log.handled.length).toBe(before);
  });

  it('the service validates the payload too (callRaw skips the client check)', async () => {
    const reply = await client.callRaw('dag', 'echo', { text: 42 }, options);
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_tool_input', field: 'text' } });
  });

  it('answers an unknown op with internal_error', async () => {
    const reply = await client.callRaw('dag', 'noSuchOp', {}, options);
    expect(reply).toMatchObject({ ok: false, error: { code: 'internal_error' } });
  });

  it('turns an unexpected exception into internal_error without its details', async () => {
    const { error } = await rejectionOf(client.call('dag', testOps, 'crash', {}, options));
    expect(error.code).toBe('internal_error');
    expect(error.message).toBe('Internal error.');
    expect(JSON.stringify(error.details ?? {})).not.toContain('secret');
  });

  it('answers internal_error when the handler returns a reply that fails its schema', async () => {
    await expect(client.call('dag', testOps, 'badReply', {}, options)).rejects.toMatchObject({
      code: 'internal_error',
    });
  });

  it('retries a transient failure while attempts are left', async () => {
    const key = randomUUID();
    await expect(client.call('dag', testOps, 'flaky', { key, failTimes: 2 }, options)).resolves.toEqual({ attempt: 3 });
    expect(log.attempts.get(key)).toBe(3);
  });

  it('answers the transient error once attempts are used up', async () => {
    const key = randomUUID();
    const { error } = await rejectionOf(client.call('dag', testOps, 'flaky', { key, failTimes: 5 }, options));
    expect(error).toMatchObject({ code: 'resource_unavailable', message: 'Database is down.' });
    expect(log.attempts.get(key)).toBe(3);
  });

  it('never retries a mutation: one run, its transient error answered, the job failed with one attempt', async () => {
    const key = randomUUID();
    const { error } = await rejectionOf(client.call('dag', testOps, 'flakyMutation', { key, failTimes: 1 }, options));
    expect(error).toMatchObject({ code: 'resource_unavailable', message: 'Database is down.' });
    const queue = new Queue(queueNameOf('dag'), { connection: { url: TEST_REDIS_URL }, prefix });
    try {
      await waitFor(
        async () => (await queue.getJobs(['failed'])).some((job) => job.name === 'flakyMutation'),
        2000,
        'the job to fail',
      );
      const failed = (await queue.getJobs(['failed'])).filter((job) => job.name === 'flakyMutation');
      expect(failed.map((job) => [job.opts.attempts, job.attemptsMade])).toEqual([[1, 1]]);
      await sleep(300);
      expect(log.attempts.get(key)).toBe(1);
      expect(log.applied).not.toContain(key);
      expect(await queue.getJobCountByTypes('waiting', 'delayed', 'active')).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('a mutation still running at its deadline is answered resource_unavailable and never applied', async () => {
    const key = randomUUID();
    const started = performance.now();
    const call = client.call('dag', testOps, 'mutate', { key, delayMs: 400 }, { ...options, timeoutMs: 200 });
    const { error } = await rejectionOf(call);
    const elapsedMs = performance.now() - started;
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toBe('dag-service did not answer within 200 ms.');
    // At the deadline, not long before or after it; the deadline is set on Redis's clock, so
    // allow a few ms of skew between that clock and this process's (seen: 188 ms on a loaded machine).
    expect(elapsedMs).toBeGreaterThanOrEqual(180);
    expect(elapsedMs).toBeLessThan(400);
    await sleep(400);
    expect(log.applied).not.toContain(key);
  });
});

describe('a request whose deadline passed before any worker took it', () => {
  it('is answered resource_unavailable at the deadline, then dropped unhandled by a late worker', async () => {
    const late = createTestHandlers();
    const key = randomUUID();
    const started = Date.now();
    const { error } = await rejectionOf(
      client.call('wiki', testOps, 'mutate', { key }, { ...options, timeoutMs: 300 }),
    );
    expect(error.message).toBe('wiki-service did not answer within 300 ms.');
    expect(Date.now() - started).toBeLessThan(1000);

    const queue = new Queue(queueNameOf('wiki'), { connection: { url: TEST_REDIS_URL }, prefix });
    const lateWorker = new ServiceWorker({
      service: 'wiki',
      catalog: testOps,
      handlers: late.handlers,
      redisUrl: TEST_REDIS_URL,
      prefix,
      ...TEST_HANDOFF_OPTION,
    });
    try {
      expect(await queue.getWaitingCount()).toBe(1);
      await lateWorker.start();
      await waitFor(
        async () => (await queue.getJobCountByTypes('waiting', 'active')) === 0,
        5000,
        'the queue to drain',
      );
      expect(late.log.handled).toEqual([]);
      expect(late.log.applied).toEqual([]);
      expect(await queue.getFailedCount()).toBe(0);
    } finally {
      await lateWorker.close();
      await queue.close();
    }
  });
});

describe('BusClient.close', () => {
  it('rejects pending calls with resource_unavailable and then fails fast', async () => {
    const own = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, ...TEST_HANDOFF_OPTION });
    await own.start();
    const pending = rejectionOf(own.call('dag', testOps, 'slow', { ms: 500 }, options));
    await sleep(20);
    await own.close();
    expect((await pending).error).toMatchObject({ code: 'resource_unavailable' });
    await expect(own.call('dag', testOps, 'echo', { text: 'x' }, options)).rejects.toMatchObject({
      code: 'resource_unavailable',
      message: 'The request bus (Redis) is unavailable.',
    });
    expect(own.isReady()).toBe(false);
  });
});
