import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusClient } from '@dagu-mcp/bus';
import {
  RunEventSchema,
  runEventsChannel,
  runOps,
  type OpRequest,
  type RunEvent,
  type RunOps,
} from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import type { RunningService } from '@dagu-mcp/service-kit';
import { Redis } from 'ioredis';

import { aliasBombSpec } from '../../../packages/dag-spec/test-fixtures/alias-bomb';
import { defaultRunConfig } from '../src/config/run-config';
import { dropDeployedState, startDeployedRunService } from '../test-fixtures/deployed-run-service';
import { daguErrorOf } from '../../../packages/contracts/test-fixtures/dagu-error-of';
import { randomSchemaName, TEST_REDIS_URL } from '../test-fixtures/run-test-env';

/**
 * run-service as it is deployed — service-kit host, BullMQ worker, real
 * PostgreSQL and Redis — driven through a BusClient with the runOps
 * catalog, the way the gateway calls it; run events observed on the Redis
 * channel the gateway subscribes to.
 */
const prefix = `test-run-${randomUUID().slice(0, 8)}`;
const schema = randomSchemaName('bus');
const principal = { id: 'user-1', subject: 'alice', role: 'admin' as const, credentialType: 'api_key' as const };
const logger = createLogger({ name: 'run-service-bus-test', level: 'silent' });
let service: RunningService;
let client: BusClient;
let subscriber: Redis;
let workDir = '';
const events: RunEvent[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'run-bus-test-'));
  const runConfig = defaultRunConfig({ workDir, queuePollMs: 200, heartbeatMs: 500, stopGraceMs: 2000 });
  subscriber = new Redis(TEST_REDIS_URL);
  subscriber.on('message', (_channel: string, message: string) => {
    const parsed = RunEventSchema.safeParse(JSON.parse(message));
    if (parsed.success) events.push(parsed.data);
  });
  await subscriber.subscribe(runEventsChannel(prefix));
  service = await startDeployedRunService(schema, prefix, runConfig, logger);
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 10_000 });
  await client.start();
});

afterAll(async () => {
  await client.close();
  await service.stop();
  subscriber.disconnect();
  await dropDeployedState(schema, prefix, workDir, logger);
});

async function terminalEvent(dagRunId: string, timeoutMs = 10_000): Promise<RunEvent> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const event = events.find((e) => e.dagRunId === dagRunId && [2, 3, 4, 6, 8].includes(e.status));
    if (event !== undefined) return event;
    if (Date.now() > until) throw new Error(`no terminal event for ${dagRunId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const call = <K extends keyof RunOps>(op: K, payload: OpRequest<RunOps, K>) =>
  client.call('run', runOps, op, payload, { principal });

describe('run-service over the bus', () => {
  it('starts a run, replies at once, publishes events, and serves detail, logs, list and latest', async () => {
    const spec =
      'steps:\n  - {name: hello, run: "for i in 1 2 3; do echo line$i; done; echo oops >&2"}\n  - {name: after, run: "sleep 0.3", depends: [hello]}\n';
    const started = Date.now();
    const ref = await call('run.start', { dagName: 'bus-dag', spec, inline: true, enqueue: false, labels: ['team=a'] });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(ref).toMatchObject({ dagName: 'bus-dag', status: 1, statusLabel: 'running' });
    const end = await terminalEvent(ref.dagRunId);
    expect(end).toMatchObject({ name: 'bus-dag', status: 4, statusLabel: 'succeeded', attemptId: ref.attemptId });
    expect(events.filter((e) => e.dagRunId === ref.dagRunId).map((e) => e.status)).toEqual([1, 4]);

    const detail = await call('run.get', { dagName: 'bus-dag', dagRunId: ref.dagRunId });
    expect(detail).toMatchObject({
      uri: `dagu://runs/bus-dag/${ref.dagRunId}`,
      logsUri: `dagu://runs/bus-dag/${ref.dagRunId}/logs`,
      status: 4,
      labels: ['team=a'],
      steps: [
        { name: 'hello', status: 4, logUri: `dagu://runs/bus-dag/${ref.dagRunId}/steps/hello/logs` },
        { name: 'after', status: 4 },
      ],
    });
    expect(detail.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const logs = await call('run.logs', { dagName: 'bus-dag', dagRunId: ref.dagRunId, tail: 2 });
    expect(logs.schedulerLog).toMatchObject({ lineCount: 2, hasMore: true });
    expect(logs.stepLogs).toEqual([
      expect.objectContaining({ stepName: 'hello', hasStdout: true, hasStderr: true }),
      expect.objectContaining({ stepName: 'after', hasStdout: false, hasStderr: false }),
    ]);
    const tail = await call('run.stepLog', {
      dagName: 'bus-dag',
      dagRunId: ref.dagRunId,
      stepName: 'hello',
      query: { tail: 2 },
    });
    expect(tail).toMatchObject({
      stdoutContent: 'line2\nline3',
      stderrContent: 'oops',
      lineCount: 2,
      totalLines: 3,
      hasMore: true,
    });
    const stderr = await call('run.stepLog', {
      dagName: 'bus-dag',
      dagRunId: ref.dagRunId,
      stepName: 'hello',
      query: { stream: 'stderr' },
    });
    expect(stderr).toMatchObject({
      stdoutContent: '',
      stderrContent: 'oops',
      lineCount: 1,
      totalLines: 1,
      hasMore: false,
    });

    const list = await call('run.list', { name: 'bus-dag' });
    expect(list.items[0]).toMatchObject({
      name: 'bus-dag',
      dagRunId: ref.dagRunId,
      status: 4,
      statusLabel: 'succeeded',
    });
    const latest = await call('run.latest', { dagNames: ['bus-dag', 'no-such-dag'] });
    expect(latest.latest).toEqual({ 'bus-dag': { dagRunId: ref.dagRunId, status: 4, statusLabel: 'succeeded' } });
  });

  it('answers errors with contract codes', async () => {
    const invalid = await daguErrorOf(
      call('run.start', { dagName: 'bad', spec: 'steps: [{name: a}]\n', inline: true, enqueue: false }),
    );
    expect(invalid).toMatchObject({ code: 'invalid_tool_input', field: 'spec' });
    expect(invalid.details?.errors).toEqual([expect.stringContaining('command')]);
    expect((await daguErrorOf(call('run.get', { dagName: 'bus-dag', dagRunId: 'nope' }))).code).toBe(
      'resource_not_found',
    );
    const ref = await call('run.start', {
      dagName: 'bus-dag2',
      spec: 'steps: [{name: a, run: "true"}]\n',
      inline: true,
      enqueue: false,
    });
    await terminalEvent(ref.dagRunId);
    expect(
      (await daguErrorOf(call('run.stepLog', { dagName: 'bus-dag2', dagRunId: ref.dagRunId, stepName: 'zz' }))).code,
    ).toBe('resource_not_found');
    expect((await daguErrorOf(call('run.stop', { dagName: 'bus-dag2', dagRunId: ref.dagRunId }))).code).toBe(
      'invalid_tool_input',
    );
  });

  it('refuses to start an alias bomb (issue 17 "YAML and JSON bombs")', async () => {
    const refused = await daguErrorOf(
      call('run.start', { dagName: 'bomb', spec: aliasBombSpec(), inline: true, enqueue: false }),
    );
    expect(refused).toMatchObject({ code: 'invalid_tool_input', field: 'spec' });
    expect(refused.details?.errors).toEqual([
      expect.stringMatching(/^invalid YAML: aliases expand the document to more than \d+ values/),
    ]);
  });

  it('cuts a 3 MB log line at the byte bound of a read, with a truncation flag (issue 17 "log reads in bytes")', async () => {
    const ref = await call('run.start', {
      dagName: 'huge-line',
      spec: 'steps:\n  - name: big\n    run: "head -c 3000000 /dev/zero | tr \'\\\\0\' x; echo; echo done"\n',
      inline: true,
      enqueue: false,
    });
    expect((await terminalEvent(ref.dagRunId, 20_000)).status).toBe(4);
    const tail = await call('run.stepLog', { dagName: 'huge-line', dagRunId: ref.dagRunId, stepName: 'big' });
    expect(Buffer.byteLength(tail.stdoutContent)).toBeLessThanOrEqual(1024 * 1024);
    expect(tail.stdoutContent.endsWith('x\ndone')).toBe(true);
    // The capture keeps lines of at most 1 MiB (line-splitter.ts): the 3 MB line is stored as three.
    expect(tail).toMatchObject({ totalLines: 4, lineCount: 3, hasMore: true, truncated: true });
    const head = await call('run.stepLog', {
      dagName: 'huge-line',
      dagRunId: ref.dagRunId,
      stepName: 'big',
      query: { head: 2 },
    });
    expect(head.stdoutContent).toBe('x'.repeat(1024 * 1024));
    expect(head).toMatchObject({ lineCount: 1, hasMore: true, truncated: true });
  });

  it('stops and retries through the bus', async () => {
    const ref = await call('run.start', {
      dagName: 'bus-stop',
      spec: 'steps: [{name: s, run: sleep 30}]\n',
      inline: true,
      enqueue: false,
    });
    const stopped = await call('run.stop', { dagName: 'bus-stop', dagRunId: ref.dagRunId });
    expect(stopped).toMatchObject({ status: 3, statusLabel: 'aborted' });
    expect((await terminalEvent(ref.dagRunId)).status).toBe(3);
    const retried = await call('run.retry', { dagName: 'bus-stop', dagRunId: ref.dagRunId });
    expect(retried).toMatchObject({ status: 1, dagRunId: ref.dagRunId });
    expect(retried.attemptId).not.toBe(ref.attemptId);
    expect((await daguErrorOf(call('run.retry', { dagName: 'bus-stop', dagRunId: ref.dagRunId }))).code).toBe(
      'conflict',
    );
    await call('run.stop', { dagName: 'bus-stop', dagRunId: ref.dagRunId });
  });

  it('pages run.list with an opaque cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ref = await call('run.start', {
        dagName: 'bus-page',
        spec: 'steps: [{name: a, run: "true"}]\n',
        inline: true,
        enqueue: false,
      });
      ids.push(ref.dagRunId);
    }
    const first = await call('run.list', { name: 'bus-page', limit: 2 });
    expect(first.items.map((item) => item.dagRunId)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await call('run.list', { name: 'bus-page', limit: 2, cursor: first.nextCursor ?? '' });
    expect(second.items.map((item) => item.dagRunId)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeUndefined();
    const latest = await call('run.list', { name: 'bus-page', dagRunId: 'latest' });
    expect(latest.items.map((item) => item.dagRunId)).toEqual([ids[2]]);
    expect(await daguErrorOf(call('run.list', { name: 'other', cursor: first.nextCursor ?? '' }))).toMatchObject({
      code: 'invalid_tool_input',
      field: 'cursor',
    });
    for (const id of ids) await terminalEvent(id);
  });
});
