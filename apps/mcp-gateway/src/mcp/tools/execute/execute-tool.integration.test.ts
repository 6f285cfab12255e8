import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { BusClient } from '@dagu-mcp/bus';
import { ANONYMOUS_PRINCIPAL, runEventsChannel, type Principal } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import type { McpCallContext } from '../../mcp-types';
import { RunEventHub } from '../../run-events';
import { createExecuteTool } from './execute-tool';
import { FakeServices } from '../../../../test-fixtures/fake-run-service';

/**
 * dagu_execute against fake dag-/run-services on the real bus and the real
 * run-event channel (036 §Semantics, §Output, §Wait, §Errors; dagu-model §9, §10).
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-exec-${randomBytes(4).toString('hex')}`;
const logger = createLogger({ name: 'test', level: 'silent' });
const services = new FakeServices(REDIS_URL, prefix);
const bus = new BusClient({ redisUrl: REDIS_URL, prefix, defaultTimeoutMs: 5000 });
const hub = new RunEventHub({ redisUrl: REDIS_URL, prefix, logger });
const tool = createExecuteTool({ bus, events: hub });

beforeAll(async () => {
  await Promise.all([services.start(), bus.start(), hub.start()]);
  services.dags.set('hello', 'steps:\n  - name: s\n    run: echo hello\n');
  services.dags.set('sleeper', 'steps:\n  - name: s\n    run: sleep 30\n');
});

afterAll(async () => {
  await hub.close();
  await bus.close();
  await services.close();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

function context(opts: { principal?: Principal; progressToken?: string; signal?: AbortSignal } = {}) {
  const notifications: ServerNotification[] = [];
  const ctx: McpCallContext = {
    principal: opts.principal ?? ANONYMOUS_PRINCIPAL,
    signal: opts.signal ?? new AbortController().signal,
    sessionId: undefined,
    progressToken: opts.progressToken,
    notify: async (n) => {
      notifications.push(n);
    },
  };
  return { ctx, notifications };
}

function sc(result: CallToolResult): Record<string, unknown> {
  return result.structuredContent ?? {};
}

describe('dagu_execute over the bus', () => {
  test('start + dag sends run.start by name, without reading the spec first (036 §Semantics), and answers without waiting', async () => {
    const specReads = services.callsOf('dag.spec').length;
    const result = await tool(
      { action: 'start', name: 'hello', params: { B: 1, A: 2 }, labels: ['team=ops'], singleton: false, noReuse: true },
      context().ctx,
    );
    expect(result.isError).toBeUndefined();
    const started = services.callsOf('run.start').at(-1);
    expect(services.callsOf('dag.spec')).toHaveLength(specReads);
    expect(started).toEqual({
      dagName: 'hello',
      inline: false,
      enqueue: false,
      params: '{"A":2,"B":1}',
      labels: ['team=ops'],
      singleton: false,
    });
    const id = String(sc(result).dagRunId);
    expect(sc(result)).toMatchObject({
      action: 'start',
      targetType: 'dag',
      dagName: 'hello',
      runUri: `dagu://runs/hello/${id}`,
      logsUri: `dagu://runs/hello/${id}/logs`,
    });
    expect(sc(result).subscribe).toEqual(expect.stringContaining(`dagu://runs/hello/${id}`));
  });

  test('start + inline_spec with wait reacts to the run event and returns the run model (036 §Wait)', async () => {
    const { ctx } = context({ progressToken: 'p1' });
    const started = Date.now();
    const result = await tool(
      { action: 'start', name: 'inline1', spec: 'steps:\n  - run: echo hi\n', dagRunId: 'fixed-1', wait: true },
      ctx,
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(services.callsOf('run.start').at(-1)).toMatchObject({
      dagName: 'inline1',
      inline: true,
      dagRunId: 'fixed-1',
    });
    expect(result.content[0]).toEqual({
      type: 'text',
      text: 'Dagu execute action completed. The run finished with status succeeded.',
    });
    expect(sc(result)).toMatchObject({
      targetType: 'inline_spec',
      dagRunId: 'fixed-1',
      completed: true,
      status: 4,
      statusLabel: 'succeeded',
      run: { dagRunId: 'fixed-1', status: 4 },
    });
  });

  test('status 7 ends the wait with completed=false and the run filled (036 §Wait)', async () => {
    const result = await tool(
      { action: 'start', name: 'gate', spec: 'steps:\n  - action: approval\n', wait: true },
      context().ctx,
    );
    expect(sc(result)).toMatchObject({ completed: false, status: 7, statusLabel: 'waiting', run: { status: 7 } });
  });

  test('enqueue leaves the run queued (status 5)', async () => {
    const result = await tool({ action: 'enqueue', name: 'hello', queue: 'q1' }, context().ctx);
    expect(services.callsOf('run.start').at(-1)).toMatchObject({ enqueue: true, queue: 'q1' });
    expect(result.isError).toBeUndefined();
  });

  test('wait timeout: success with completed=false and a sentence pointing at runUri', async () => {
    const result = await tool({ action: 'start', name: 'sleeper', wait: true, waitTimeoutSeconds: 1 }, context().ctx);
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(sc(result)).toMatchObject({ completed: false, status: 1, statusLabel: 'running' });
    expect(text).toContain(String(sc(result).runUri));
  });

  test('stop with wait ends at aborted; a retry with wait waits for the new attempt', async () => {
    const started = await tool({ action: 'start', name: 'sleeper' }, context().ctx);
    const dagRunId = String(sc(started).dagRunId);
    const stopped = await tool({ action: 'stop', name: 'sleeper', dagRunId, wait: true }, context().ctx);
    expect(sc(stopped)).toMatchObject({
      action: 'stop',
      targetType: 'run',
      completed: true,
      status: 3,
      statusLabel: 'aborted',
    });
    const retried = await tool(
      { action: 'retry', name: 'sleeper', dagRunId, stepName: 's', includeDownstream: true, wait: true },
      context().ctx,
    );
    expect(services.callsOf('run.retry').at(-1)).toEqual({
      dagName: 'sleeper',
      dagRunId,
      stepName: 's',
      includeDownstream: true,
    });
    expect(sc(retried)).toMatchObject({ action: 'retry', completed: true, status: 4 });
  });

  test('client cancel ends the wait, not the run (dagu-model §10)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await tool(
      { action: 'start', name: 'sleeper', wait: true },
      context({ signal: controller.signal }).ctx,
    );
    expect(sc(result)).toMatchObject({ completed: false, status: 1 });
    expect(services.callsOf('run.stop')).toHaveLength(1);
  });

  test('unknown DAG → resource_not_found with didYouMean, and the error keys (036 §Errors)', async () => {
    const result = await tool({ action: 'start', name: 'hellp' }, context().ctx);
    expect(result.isError).toBe(true);
    expect(sc(result)).toEqual({
      code: 'resource_not_found',
      message: 'DAG "hellp" does not exist.',
      action: 'start',
      targetType: 'dag',
      dagName: 'hellp',
      details: { didYouMean: ['hello'] },
    });
  });

  test('run-service errors keep their code: singleton conflict, stop of a finished run', async () => {
    await tool({ action: 'start', name: 'sleeper', dagRunId: 'solo-1' }, context().ctx);
    expect(sc(await tool({ action: 'start', name: 'sleeper', singleton: true }, context().ctx))).toMatchObject({
      code: 'conflict',
    });
    const done = await tool({ action: 'start', name: 'hello', wait: true }, context().ctx);
    const stop = await tool({ action: 'stop', name: 'hello', dagRunId: String(sc(done).dagRunId) }, context().ctx);
    expect(sc(stop)).toMatchObject({ code: 'invalid_tool_input', action: 'stop', dagRunId: sc(done).dagRunId });
  });

  test('run control needs operator or higher (dagu-model §9)', async () => {
    const viewer: Principal = { id: 'v', subject: 'v', role: 'viewer', credentialType: 'api_key' };
    const before = services.calls.length;
    const result = await tool({ action: 'start', name: 'hello' }, context({ principal: viewer }).ctx);
    expect(sc(result)).toMatchObject({ code: 'unauthorized', action: 'start', dagName: 'hello' });
    expect(services.calls.length).toBe(before);
    const operator: Principal = { ...viewer, role: 'operator' };
    expect(
      (await tool({ action: 'start', name: 'hello' }, context({ principal: operator }).ctx)).isError,
    ).toBeUndefined();
  });

  test('the hub drops malformed events and skips child-run events', async () => {
    const redis = new Redis(REDIS_URL);
    const watch = hub.watch('quiet');
    await redis.publish(runEventsChannel(prefix), 'not json');
    await redis.publish(
      runEventsChannel(prefix),
      JSON.stringify({
        name: 'quiet',
        dagRunId: 'c',
        root: { name: 'p', dagRunId: 'p1' },
        status: 1,
        statusLabel: 'running',
        at: 'x',
      }),
    );
    expect(await watch.changed(300)).toBe(false);
    await redis.publish(
      runEventsChannel(prefix),
      JSON.stringify({ name: 'quiet', dagRunId: 'x', status: 1, statusLabel: 'running', at: 'x' }),
    );
    expect(await watch.changed(2000)).toBe(true);
    watch.close();
    await redis.quit();
  });
});
