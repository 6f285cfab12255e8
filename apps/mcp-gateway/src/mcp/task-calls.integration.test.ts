/**
 * Tool calls run as tasks (task-calls.ts, mcp-revisions §4) with task records in real Redis:
 * a result completes the task, a tool error too, a JSON-RPC error fails it, an MRTR round
 * parks it as input_required and a resume calls the tool again with the responses and state.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLogger } from '@dagu-mcp/runtime';
import type { Principal } from '@dagu-mcp/contracts';
import { TEST_REDIS_URL } from './transport/mcp-harness.test-support';
import { JsonRpcError } from './transport/protocol';
import type { McpCallContext } from './transport/dispatcher';
import { asksBeforeTask, TaskCallRunner, taskSupportOf, type TaskCallParams } from './task-calls';
import { TaskStore, type TaskRecord } from './task-store';

const prefix = `it-task-calls-${randomBytes(4).toString('hex')}`;
let redis: Redis;
let store: TaskStore;
let runner: TaskCallRunner;
const calls: TaskCallParams[] = [];

const principal: Principal = { id: 'u-1', role: 'operator', source: 'api_key' } as unknown as Principal;
const ctx: McpCallContext = {
  principal,
  signal: new AbortController().signal,
  sessionId: undefined,
  progressToken: undefined,
  notify: async () => undefined,
};

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
  store = new TaskStore(redis, prefix);
  runner = new TaskCallRunner(store, createLogger({ name: 'task-calls-test', level: 'silent' }));
  runner.attach(async (params) => {
    calls.push(params);
    switch (params.name) {
      case 'ok':
        return { content: [{ type: 'text', text: 'done' }] };
      case 'tool_error':
        return { content: [{ type: 'text', text: 'no' }], isError: true };
      case 'crash':
        throw new JsonRpcError(-32603, 'crashed');
      case 'ask':
        return params.inputResponses === undefined
          ? {
              content: [],
              resultType: 'input_required',
              inputRequests: { a: { method: 'elicitation/create' } },
              requestState: 's1',
            }
          : { content: [{ type: 'text', text: JSON.stringify(params.inputResponses) }] };
      default:
        throw new Error('unexpected');
    }
  });
});

afterAll(async () => {
  runner.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/** The stored record of `taskId` once `done` holds for it (the call runs in the background). */
async function settled(taskId: string, done: (record: TaskRecord) => boolean): Promise<TaskRecord> {
  for (let i = 0; i < 100; i++) {
    const record = await store.get(taskId, 'u-1');
    if (record !== undefined && done(record)) return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`task ${taskId} never settled`);
}

const taskIdOf = (result: Record<string, unknown>): string => String(result.taskId);

describe('TaskCallRunner', () => {
  test('taskSupport and asksBeforeTask are read from the tool definition', () => {
    expect(taskSupportOf({ execution: { taskSupport: 'required' } })).toBe('required');
    expect(taskSupportOf({ execution: { taskSupport: 'sometimes' } })).toBe('forbidden');
    expect(taskSupportOf({ name: 'x' })).toBe('forbidden');
    expect(asksBeforeTask({ _meta: { 'io.dagu/asksBeforeTask': true } })).toBe(true);
    expect(asksBeforeTask({ _meta: {} })).toBe(false);
  });

  test('a result completes the task (a tool error too); a JSON-RPC error fails it', async () => {
    const created = await runner.start({ name: 'ok' }, ctx, {});
    expect(created).toMatchObject({ resultType: 'task', status: 'working', taskId: expect.any(String) });
    const ok = await settled(taskIdOf(created), (r) => r.final !== undefined);
    expect(ok.final).toMatchObject({ status: 'completed', result: { content: [{ text: 'done' }] } });
    const toolError = await settled(
      taskIdOf(await runner.start({ name: 'tool_error' }, ctx, {})),
      (r) => r.final !== undefined,
    );
    expect(toolError.final).toMatchObject({ status: 'completed', result: { isError: true } });
    const crash = await settled(taskIdOf(await runner.start({ name: 'crash' }, ctx, {})), (r) => r.final !== undefined);
    expect(crash.final).toMatchObject({ status: 'failed', error: { code: -32603, message: 'crashed' } });
  });

  test('an MRTR round parks the task; a resume calls the tool again with the responses and its state', async () => {
    const created = await runner.start({ name: 'ask', arguments: { x: 1 } }, ctx, { extensions: {} });
    const parked = await settled(taskIdOf(created), (r) => r.pending !== undefined);
    expect(parked.pending).toEqual({
      inputRequests: { a: { method: 'elicitation/create' } },
      requestState: 's1',
      responses: {},
    });
    const resumed = await store.update(parked, { pending: undefined });
    runner.resume(resumed, { a: { action: 'accept' } }, 's1', principal);
    const done = await settled(taskIdOf(created), (r) => r.final !== undefined);
    expect(done.final).toMatchObject({ status: 'completed' });
    expect(calls.at(-1)).toEqual({
      name: 'ask',
      arguments: { x: 1 },
      inputResponses: { a: { action: 'accept' } },
      requestState: 's1',
    });
  });
});
