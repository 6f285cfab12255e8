import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobOptionsFor } from '../bus-protocol';
import { JobInserter } from './job-insert';
import { deleteKeysWithPrefix, echoRequest, randomPrefix, TEST_REDIS_URL } from '../../test-fixtures/bus-test-env';

/**
 * Parity of the bus's lean job insertion with BullMQ's own `Queue.add`: the
 * same hash fields, lists, marker and events, so a BullMQ upgrade that
 * changes its job layout fails here instead of in production.
 */
const prefix = randomPrefix('insert');
const redis = new Redis(TEST_REDIS_URL);
const inserter = new JobInserter(redis, prefix);
const request = echoRequest(`${prefix}:reply:c1`);
let queue: Queue;

beforeEach(async () => {
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  queue = new Queue('parity', { connection: redis, prefix });
  await queue.waitUntilReady();
});
afterEach(() => queue.close());
afterAll(async () => {
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  redis.disconnect();
});

async function storedJob(id: string): Promise<Record<string, unknown>> {
  const { timestamp, opts, ...fields } = await redis.hgetall(queue.toKey(id));
  expect(Number(timestamp)).toBeGreaterThan(0);
  return { ...fields, opts: JSON.parse(opts ?? 'null') };
}

async function eventsOf(id: string): Promise<string[][]> {
  const entries = await redis.xrange(queue.keys.events ?? '', '-', '+');
  return entries
    .map(([, fields]) => fields)
    .filter((fields) => fields.includes(id))
    .map((fields) => fields.map((f) => (f === id ? 'ID' : f)));
}

describe('JobInserter', () => {
  it.each([1, 3])('stores a job (attempts %p) exactly as Queue.add does', async (attempts) => {
    await queue.add('echo', request, jobOptionsFor('by-bullmq', attempts));
    await inserter.insert(queue, 'echo', request, jobOptionsFor('by-bus', attempts));

    const [ours, bullmqs] = [await storedJob('by-bus'), await storedJob('by-bullmq')];
    expect(bullmqs.opts).toEqual(jobOptionsFor('by-bullmq', attempts));
    expect(ours).toEqual({ ...bullmqs, opts: jobOptionsFor('by-bus', attempts) });
    expect(await redis.lrange(queue.keys.wait ?? '', 0, -1)).toEqual(['by-bus', 'by-bullmq']);
    expect(await redis.zrange(queue.keys.marker ?? '', 0, -1)).toEqual(['0']);
    expect(await eventsOf('by-bus')).toEqual(await eventsOf('by-bullmq'));

    const [theirs, mine] = await Promise.all([queue.getJob('by-bullmq'), queue.getJob('by-bus')]);
    expect(mine?.data).toEqual(request);
    expect(mine?.name).toBe('echo');
    expect(mine?.opts).toEqual({ ...theirs?.opts, jobId: 'by-bus' });
    expect(await queue.getJobState('by-bus')).toBe('waiting');
  });

  it('puts the job in the paused list, with no marker, while the queue is paused', async () => {
    await queue.pause();
    await inserter.insert(queue, 'echo', request, jobOptionsFor('paused-job', 1));
    expect(await queue.getJobCounts('paused', 'wait')).toEqual({ paused: 1, wait: 0 });
    expect(await redis.exists(queue.keys.marker ?? '')).toBe(0);
  });

  it('refuses an id that is already taken and leaves the job alone', async () => {
    await inserter.insert(queue, 'echo', request, jobOptionsFor('twice', 1));
    await expect(inserter.insert(queue, 'other', request, jobOptionsFor('twice', 1))).rejects.toThrow('already exists');
    expect((await queue.getJob('twice'))?.name).toBe('echo');
    expect(await queue.getWaitingCount()).toBe(1);
  });
});
