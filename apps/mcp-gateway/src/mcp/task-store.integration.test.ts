/**
 * The task records of the tasks extension (task-store.ts, mcp-revisions §4) against real Redis:
 * TTL from `ttlMs`, owner-bound reads, a terminal answer written once.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from './transport/mcp-harness.test-support';
import { createdTaskResult, TaskStore } from './task-store';

const prefix = `it-tasks-${randomBytes(4).toString('hex')}`;
let redis: Redis;
let store: TaskStore;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
  store = new TaskStore(redis, prefix, { ttlMs: 60_000, pollIntervalMs: 500 });
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const run = { dagName: 'etl', dagRunId: 'r-1', action: 'start' as const, targetType: 'dag' as const };

describe('TaskStore', () => {
  test('a task is stored under the bus prefix with its ttlMs, and read back only by its owner', async () => {
    const record = await store.create({ ownerId: 'u-1', toolName: 'dagu_execute', run });
    const ttl = await redis.pttl(`${prefix}:mcp:task:${record.taskId}`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await store.get(record.taskId, 'u-1')).toMatchObject({ taskId: record.taskId, run });
    expect(await store.get(record.taskId, 'u-2')).toBeUndefined();
    expect(await store.get('no-such-task', 'u-1')).toBeUndefined();
    expect(createdTaskResult(record)).toEqual({
      resultType: 'task',
      taskId: record.taskId,
      status: 'working',
      statusMessage: 'The run dagu://runs/etl/r-1 is started.',
      createdAt: new Date(record.createdAt).toISOString(),
      lastUpdatedAt: new Date(record.createdAt).toISOString(),
      ttlMs: 60_000,
      pollIntervalMs: 500,
    });
  });

  test('the first terminal answer wins and keeps the record TTL; later updates keep it too', async () => {
    const record = await store.create({ ownerId: 'u-1', toolName: 'dagu_execute', run });
    const cancelled = await store.finish(record, { status: 'cancelled', at: 1 });
    expect(cancelled.status).toBe('cancelled');
    const again = await store.finish(record, { status: 'completed', at: 2, result: { content: [] } });
    expect(again).toEqual({ status: 'cancelled', at: 1 });
    expect(await redis.pttl(`${prefix}:mcp:task:${record.taskId}:final`)).toBeGreaterThan(50_000);
    await store.note(record, 'a note');
    const read = await store.get(record.taskId, 'u-1');
    expect(read).toMatchObject({ statusMessage: 'a note', final: { status: 'cancelled' } });
    expect(await redis.pttl(`${prefix}:mcp:task:${record.taskId}`)).toBeGreaterThan(50_000);
  });

  test('an expired task is gone for everyone, and nothing is finished for it', async () => {
    const short = new TaskStore(redis, prefix, { ttlMs: 50 });
    const record = await short.create({ ownerId: 'u-1', toolName: 'dagu_execute', run });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await short.get(record.taskId, 'u-1')).toBeUndefined();
    await short.finish(record, { status: 'completed', at: 3 });
    expect(await redis.exists(`${prefix}:mcp:task:${record.taskId}:final`)).toBe(0);
  });
});
