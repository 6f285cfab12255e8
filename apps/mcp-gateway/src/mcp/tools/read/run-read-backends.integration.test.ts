import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { BusClient } from '@dagu-mcp/bus';
import { ANONYMOUS_PRINCIPAL, DaguError } from '@dagu-mcp/contracts';
import { FakeServices } from '../../../../test-fixtures/fake-run-service';
import { getDag } from '../../../actions/dag-reads.actions';
import { startRun } from '../../../actions/run-control.actions';
import { parseReadInput } from './read-input';
import { createRunReadBackends, withLatestRun } from './run-read-backends';
import type { ReadBackend } from './read-backends';

/** The run read targets of 021 (`runs`, `run`, `run_logs`, `step_log`, `dag.latestRun`): one run read action each. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-runread-${randomBytes(4).toString('hex')}`;
const services = new FakeServices(REDIS_URL, prefix);
const bus = new BusClient({ redisUrl: REDIS_URL, prefix, defaultTimeoutMs: 5000 });
const backends = createRunReadBackends(bus);
const dagBackend: ReadBackend = async (request, principal) =>
  getDag(bus, principal, { name: request.fields.name ?? '' });
const dag = withLatestRun(dagBackend, bus);

beforeAll(async () => {
  await Promise.all([services.start(), bus.start()]);
  services.dags.set('hello', 'steps:\n  - run: sleep 30\n');
  services.dags.set('never', 'steps:\n  - run: echo\n');
});

afterAll(async () => {
  await bus.close();
  await services.close();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

async function read(args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const request = parseReadInput(args, {});
  const all: Partial<Record<string, ReadBackend>> = { ...backends, dag };
  const backend = all[request.target];
  if (backend === undefined) throw new Error(`no backend for ${request.target}`);
  return backend(request, ANONYMOUS_PRINCIPAL);
}

describe('run read backends (021 §Target contracts)', () => {
  test('runs → run.list with the parsed query, in target and URI mode', async () => {
    await read({ target: 'runs', query: 'name=hello&status=1&status=4&limit=5&labels=a,b' });
    expect(services.callsOf('run.list').at(-1)).toEqual({
      name: 'hello',
      status: [1, 4],
      limit: 5,
      labels: ['a', 'b'],
    });
    await read({ uri: 'dagu://runs?dagRunId=latest' });
    expect(services.callsOf('run.list').at(-1)).toEqual({ dagRunId: 'latest' });
    await read({ target: 'runs' });
    expect(services.callsOf('run.list').at(-1)).toEqual({});
  });

  test('run → run.get with subRunId for a child run; unknown run → resource_not_found', async () => {
    await expect(read({ target: 'run', name: 'hello', dagRunId: 'nope' })).rejects.toMatchObject({
      code: 'resource_not_found',
    });
    await read({ uri: 'dagu://runs/hello/nope/sub/child1' }).catch(() => undefined);
    expect(services.callsOf('run.get').at(-1)).toEqual({ dagName: 'hello', dagRunId: 'nope', subRunId: 'child1' });
  });

  test('run_logs → run.logs with tail', async () => {
    const data = await read({ target: 'run_logs', name: 'hello', dagRunId: 'r1', query: 'tail=100' });
    expect(services.callsOf('run.logs').at(-1)).toEqual({ dagName: 'hello', dagRunId: 'r1', tail: 100 });
    expect(data).toMatchObject({ schedulerLog: { lineCount: 1 }, stepLogs: [] });
    await read({ uri: 'dagu://runs/hello/r1/logs' });
    expect(services.callsOf('run.logs').at(-1)).toEqual({ dagName: 'hello', dagRunId: 'r1' });
  });

  test('step_log → run.stepLog with the step, the foreach body step and the reader query', async () => {
    await read({
      target: 'step_log',
      name: 'hello',
      dagRunId: 'r1',
      stepName: 'a/b',
      query: 'offset=3&limit=2&stream=stderr',
    });
    expect(services.callsOf('run.stepLog').at(-1)).toEqual({
      dagName: 'hello',
      dagRunId: 'r1',
      stepName: 'a/b',
      query: { offset: 3, limit: 2, stream: 'stderr' },
    });
    await read({ uri: 'dagu://runs/hello/r1/sub/c1/steps/each/foreach/2/steps/body/logs?tail=5' });
    expect(services.callsOf('run.stepLog').at(-1)).toEqual({
      dagName: 'hello',
      dagRunId: 'r1',
      subRunId: 'c1',
      stepName: 'each',
      item: '2',
      bodyStepName: 'body',
      query: { tail: 5 },
    });
  });

  test('dag gains latestRun once the DAG has run; not before; an unknown DAG fails as dag-service says', async () => {
    expect(await read({ target: 'dag', name: 'never' })).not.toHaveProperty('latestRun');
    await startRun(bus, ANONYMOUS_PRINCIPAL, { dagName: 'hello', dagRunId: 'lr1' });
    expect(await read({ target: 'dag', name: 'hello' })).toMatchObject({
      name: 'hello',
      latestRun: { dagRunId: 'lr1', status: 1, statusLabel: 'running' },
    });
    const error = await read({ target: 'dag', name: 'nope' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DaguError);
  });
});
