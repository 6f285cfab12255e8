import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Queue } from 'bullmq';
import { BusClient } from './bus-client';
import { queueNameOf } from './bus-protocol';
import { SILENT_LOGGER, type BusLogger } from './bus-logger';
import { ServiceWorker } from './service-worker';
import { createTestHandlers, testOps } from '../test-fixtures/test-ops';
import { ThrowawayRedis } from '../test-fixtures/throwaway-redis';
import {
  deleteKeysWithPrefix,
  randomPrefix,
  rejectionOf,
  settle,
  type Settled,
  TEST_HANDOFF,
  TEST_HANDOFF_OPTION,
  TEST_PRINCIPAL,
  TEST_REDIS_URL,
  waitFor,
} from '../test-fixtures/bus-test-env';

/**
 * Failures of the machinery around the bus: a service replica killed mid-job
 * (BullMQ stalled-job recovery: the job must not stay `active`, the caller is
 * answered by its deadline) and Redis going away and coming back (calls fail
 * fast while it is down, then work again with the same client and worker).
 */
const options = { principal: TEST_PRINCIPAL };
const fixtures = path.resolve(__dirname, '..', 'test-fixtures');
const LOCK_MS = 1000;
const STALLED_MS = 500;

/** Starts killable-worker.ts in a child process and resolves once it prints READY. */
async function spawnWorker(prefix: string): Promise<{ child: ChildProcess; handling: Promise<string> }> {
  const child = spawn(
    process.execPath,
    ['-r', path.join(fixtures, 'ts-register.js'), path.join(fixtures, 'killable-worker.ts')],
    {
      env: {
        ...process.env,
        REDIS_URL: TEST_REDIS_URL,
        BUS_PREFIX: prefix,
        LOCK_MS: String(LOCK_MS),
        STALLED_MS: String(STALLED_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let output = '';
  let onHandling: (jobId: string) => void = () => undefined;
  const handling = new Promise<string>((resolve) => (onHandling = resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker child exited early with ${String(code)}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('READY\n')) resolve();
      const match = /HANDLING (\S+)\n/.exec(output);
      if (match?.[1] !== undefined) onHandling(match[1]);
    });
  });
  await ready;
  return { child, handling };
}

function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  return exited;
}

describe('a service replica killed mid-job', () => {
  const prefix = randomPrefix('killed');
  const client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, ...TEST_HANDOFF_OPTION });
  const queue = new Queue(queueNameOf('run'), { connection: { url: TEST_REDIS_URL }, prefix });

  beforeAll(() => client.start());
  afterAll(async () => {
    await client.close();
    await queue.close();
    await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  });

  /** Sends a 60 s `slow` call to a child worker and SIGKILLs it once the handler runs. */
  async function callAndKill(timeoutMs: number): Promise<{ call: Promise<Settled<unknown>>; jobId: string }> {
    const { child, handling } = await spawnWorker(prefix);
    const call = settle(client.call('run', testOps, 'slow', { ms: 60_000 }, { ...options, timeoutMs }));
    const jobId = await handling;
    await killHard(child);
    expect(await queue.getJobState(jobId)).toBe('active');
    return { call, jobId };
  }

  it('answers the caller resource_unavailable at its deadline and the job leaves active; a late survivor drops it', async () => {
    const { call, jobId } = await callAndKill(2000);
    const settled = await call;
    expect(settled).toMatchObject({
      ok: false,
      error: { code: 'resource_unavailable', message: 'run-service did not answer within 2000 ms.' },
    });
    expect(settled.elapsedMs).toBeLessThan(2500);

    const survivor = createTestHandlers();
    const worker = new ServiceWorker({
      service: 'run',
      catalog: testOps,
      handlers: survivor.handlers,
      redisUrl: TEST_REDIS_URL,
      prefix,
      ...TEST_HANDOFF_OPTION,
      lockDurationMs: LOCK_MS,
      stalledIntervalMs: STALLED_MS,
    });
    await worker.start();
    try {
      await waitFor(async () => (await queue.getJobState(jobId)) !== 'active', 4000, 'the stalled job to leave active');
      await waitFor(
        async () => (await queue.getJobCountByTypes('waiting', 'active')) === 0,
        2000,
        'the queue to drain',
      );
      expect(survivor.log.handled).toEqual([]);
    } finally {
      await worker.close();
    }
  });

  it('a survivor already running recovers the job and answers before a longer deadline', async () => {
    const survivor = createTestHandlers();
    const fast = { ...survivor.handlers, slow: async () => ({ sleptMs: 0 }) };
    const { call, jobId } = await callAndKill(8000);
    const worker = new ServiceWorker({
      service: 'run',
      catalog: testOps,
      handlers: fast,
      redisUrl: TEST_REDIS_URL,
      prefix,
      ...TEST_HANDOFF_OPTION,
      lockDurationMs: LOCK_MS,
      stalledIntervalMs: STALLED_MS,
    });
    await worker.start();
    try {
      const settled = await call;
      expect(settled).toMatchObject({ ok: true, value: { sleptMs: 0 } });
      expect(settled.elapsedMs).toBeLessThan(8000);
      // The reply is published before BullMQ's completion bookkeeping, so the job may still be active for a moment.
      await waitFor(
        async () => (await queue.getJobState(jobId)) !== 'active',
        2000,
        'the recovered job to leave active',
      );
    } finally {
      await worker.close();
    }
  });

  it('a survivor does not run again a mutation the killed replica was running: outcome unknown, job failed', async () => {
    const survivor = createTestHandlers();
    const { child, handling } = await spawnWorker(prefix);
    const call = settle(
      client.call('run', testOps, 'mutate', { key: 'k1', delayMs: 60_000 }, { ...options, timeoutMs: 8000 }),
    );
    const jobId = await handling;
    await killHard(child);
    const worker = new ServiceWorker({
      service: 'run',
      catalog: testOps,
      handlers: survivor.handlers,
      redisUrl: TEST_REDIS_URL,
      prefix,
      ...TEST_HANDOFF_OPTION,
      lockDurationMs: LOCK_MS,
      stalledIntervalMs: STALLED_MS,
    });
    await worker.start();
    try {
      const settled = await call;
      expect(settled).toMatchObject({
        ok: false,
        error: { code: 'resource_unavailable', details: { outcome: 'unknown' } },
      });
      expect(settled.elapsedMs).toBeLessThan(8000);
      await waitFor(async () => (await queue.getJobState(jobId)) === 'failed', 2000, 'the mutation job to fail');
      expect(survivor.log.handled).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});

describe('a service replica killed while idle', () => {
  const prefix = randomPrefix('idle-kill');
  const client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, ...TEST_HANDOFF_OPTION });

  beforeAll(() => client.start());
  afterAll(async () => {
    await client.close();
    await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  });

  it('loses no call: those handed to it before its alive key expired are queued again and answered by the live replica', async () => {
    const survivor = createTestHandlers();
    let requeued = 0;
    const logger: BusLogger = {
      ...SILENT_LOGGER,
      child: () => logger,
      warn: (fields: Record<string, unknown>) => {
        if (typeof fields.requeued === 'number') requeued += fields.requeued;
      },
    };
    const worker = new ServiceWorker({
      service: 'run',
      catalog: testOps,
      handlers: survivor.handlers,
      redisUrl: TEST_REDIS_URL,
      prefix,
      logger,
      ...TEST_HANDOFF_OPTION,
    });
    await worker.start();
    try {
      const { child } = await spawnWorker(prefix);
      await killHard(child);
      // The killed replica's 16 slots stay listed until its alive key (1 s) expires; calls handed to it
      // meanwhile are queued again by the survivor's sweep (every third of a second) and answered.
      const started = Date.now();
      const calls = Array.from({ length: 40 }, (_, i) =>
        client.call('run', testOps, 'echo', { text: `n${i}` }, { ...options, timeoutMs: 4000 }),
      );
      const replies = await Promise.all(calls);
      expect(replies.map((reply) => reply.text)).toEqual(Array.from({ length: 40 }, (_, i) => `n${i}`));
      expect(Date.now() - started).toBeLessThan(2500);
      expect(survivor.log.handled).toHaveLength(40);
      // With the hand-off, the calls did reach the dead replica's lane and were swept back (the survivor's
      // slots were listed first); without it, nothing is handed over, so nothing needs sweeping.
      if (TEST_HANDOFF) expect(requeued).toBeGreaterThan(0);
      else expect(requeued).toBe(0);
    } finally {
      await worker.close();
    }
  });
});

describe('Redis going away and coming back', () => {
  const redis = new ThrowawayRedis();
  const prefix = randomPrefix('restart');
  let client: BusClient;
  let worker: ServiceWorker<typeof testOps>;

  beforeAll(async () => {
    await redis.start();
    client = new BusClient({ redisUrl: redis.url, prefix, defaultTimeoutMs: 2000, ...TEST_HANDOFF_OPTION });
    worker = new ServiceWorker({
      service: 'dag',
      catalog: testOps,
      handlers: createTestHandlers().handlers,
      redisUrl: redis.url,
      prefix,
      ...TEST_HANDOFF_OPTION,
    });
    await Promise.all([client.start(), worker.start()]);
  });
  afterAll(async () => {
    await client.close();
    await worker.close();
    await redis.stop();
  });

  it('fails calls fast while Redis is down and serves them again after it returns, with the same client and worker', async () => {
    await expect(client.call('dag', testOps, 'echo', { text: 'before' }, options)).resolves.toMatchObject({
      text: 'before',
    });

    await redis.stop();
    await waitFor(() => !client.isReady(), 2000, 'the client to notice Redis is down');
    for (let i = 0; i < 5; i += 1) {
      const { error, elapsedMs } = await rejectionOf(client.call('dag', testOps, 'echo', { text: 'down' }, options));
      expect(error).toMatchObject({ code: 'resource_unavailable', message: 'The request bus (Redis) is unavailable.' });
      expect(elapsedMs).toBeLessThan(100);
    }
    await expect(client.ping()).rejects.toMatchObject({ code: 'resource_unavailable' });

    await redis.start();
    await waitFor(() => client.isReady() && worker.isReady(), 10_000, 'the client and worker to reconnect');
    await expect(client.call('dag', testOps, 'echo', { text: 'after' }, options)).resolves.toMatchObject({
      text: 'after',
    });
  });
});
