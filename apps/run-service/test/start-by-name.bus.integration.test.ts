import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusClient, ServiceWorker } from '@dagu-mcp/bus';
import { dagOps, DaguError, runOps, type OpRequest, type RunOps } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { DagChangeChannel, dagChangedChannel, type RunningService } from '@dagu-mcp/service-kit';
import { Redis } from 'ioredis';
import { rejectionOf, waitFor } from '../../../packages/bus/test-fixtures/bus-test-env';
import { defaultRunConfig } from '../src/config/run-config';
import { dropDeployedState, startDeployedRunService } from '../test-fixtures/deployed-run-service';
import { randomSchemaName, TEST_REDIS_URL } from '../test-fixtures/run-test-env';

/**
 * `run.start` by DAG name (issue 28): run-service as deployed reads the stored YAML from dag-service's
 * `dag.spec` over the real bus, keeps it, and drops it when dag-service announces a change on
 * `<prefix>:dag:changed` (docs/decisions.md "DAG spec cache"). dag-service is played by a bus worker
 * serving `dag.spec` from a map and counting its calls; changes are announced through the same
 * DagChangeChannel dag-service uses.
 */
const prefix = `test-byname-${randomUUID().slice(0, 8)}`;
const schema = randomSchemaName('byname');
const principal = { id: 'user-1', subject: 'olga', role: 'operator' as const, credentialType: 'api_key' as const };
const logger = createLogger({ name: 'start-by-name-test', level: 'silent' });
const stored = new Map<string, string>();
const specReads: { name: string; by: string }[] = [];
let service: RunningService;
let client: BusClient;
let dagService: ServiceWorker<{ 'dag.spec': (typeof dagOps)['dag.spec'] }>;
let announcer: DagChangeChannel;
let redis: Redis;
let workDir = '';

const say = (word: string) => `steps:\n  - name: say\n    run: echo ${word}\n`;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'byname-test-'));
  dagService = new ServiceWorker({
    service: 'dag',
    catalog: { 'dag.spec': dagOps['dag.spec'] },
    handlers: {
      'dag.spec': async ({ name }, ctx) => {
        specReads.push({ name, by: ctx.principal.id });
        // dag-service frozen for this one DAG: no answer within any start's deadline.
        if (name === 'silent') await new Promise((resolve) => setTimeout(resolve, 6000));
        const spec = stored.get(name);
        if (spec === undefined)
          throw new DaguError('resource_not_found', `DAG "${name}" does not exist.`, {
            details: { didYouMean: ['greet'] },
          });
        return { name, mimeType: 'application/yaml', spec, errors: [] };
      },
    },
    redisUrl: TEST_REDIS_URL,
    prefix,
  });
  announcer = new DagChangeChannel({ redisUrl: TEST_REDIS_URL, prefix, replica: 'test-dag', logger });
  // A TTL far beyond the test: a copy read again is read again because of an announcement, not its age.
  const runConfig = defaultRunConfig({
    workDir,
    queuePollMs: 200,
    heartbeatMs: 500,
    stopGraceMs: 2000,
    specCacheMs: 60_000,
  });
  service = await startDeployedRunService(schema, prefix, runConfig, logger);
  client = new BusClient({ redisUrl: TEST_REDIS_URL, prefix, defaultTimeoutMs: 10_000 });
  redis = new Redis(TEST_REDIS_URL);
  await Promise.all([dagService.start(), client.start()]);
  // run-service listens for changes before any assertion relies on an announcement reaching it.
  await waitFor(
    async () => {
      const reply = (await redis.pubsub('NUMSUB', dagChangedChannel(prefix))) as [string, number];
      return Number(reply[1]) >= 1;
    },
    10_000,
    'run-service subscribed to DAG changes',
  );
});

afterAll(async () => {
  await client.close();
  await service.stop();
  await dagService.close();
  await announcer.close();
  redis.disconnect();
  await dropDeployedState(schema, prefix, workDir, logger);
});

const call = <K extends keyof RunOps>(op: K, payload: OpRequest<RunOps, K>) =>
  client.call('run', runOps, op, payload, { principal });

/** Starts `name` by name, waits for its end, returns what its `say` step printed. */
async function startAndRead(name: string): Promise<string> {
  const ref = await call('run.start', { dagName: name, inline: false, enqueue: false });
  let detail = await call('run.get', { dagName: name, dagRunId: ref.dagRunId });
  const until = Date.now() + 15_000;
  while (detail.statusLabel !== 'succeeded' && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    detail = await call('run.get', { dagName: name, dagRunId: ref.dagRunId });
  }
  expect(detail.statusLabel).toBe('succeeded');
  const log = await call('run.stepLog', { dagName: name, dagRunId: ref.dagRunId, stepName: 'say', query: {} });
  return String(log.stdoutContent);
}

describe('run.start by DAG name', () => {
  it('runs the stored YAML, reads it once, and reads it again after dag-service announces a change', async () => {
    stored.set('greet', say('first'));
    expect(await startAndRead('greet')).toBe('first');
    expect(specReads.filter((read) => read.name === 'greet')).toEqual([{ name: 'greet', by: 'system:run-service' }]);

    // Kept: the second start does not ask dag-service.
    expect(await startAndRead('greet')).toBe('first');
    expect(specReads.filter((read) => read.name === 'greet')).toHaveLength(1);

    // Changed as dag-service changes a DAG: written, then announced before the change is answered.
    stored.set('greet', say('second'));
    await announcer.publish('greet');
    expect(await startAndRead('greet')).toBe('second');
    expect(specReads.filter((read) => read.name === 'greet')).toHaveLength(2);
  });

  it('a change of another DAG leaves this one kept', async () => {
    stored.set('other', say('other'));
    stored.set('kept', say('kept'));
    expect(await startAndRead('kept')).toBe('kept');
    await announcer.publish('other');
    expect(await startAndRead('kept')).toBe('kept');
    expect(specReads.filter((read) => read.name === 'kept')).toHaveLength(1);
  });

  it("an unknown DAG is resource_not_found with dag-service's suggestions, and nothing is kept for it", async () => {
    const { error } = await rejectionOf(call('run.start', { dagName: 'gret', inline: false, enqueue: false }));
    expect(error.code).toBe('resource_not_found');
    expect(error.details).toEqual({ didYouMean: ['greet'] });
    stored.set('gret', say('now'));
    expect(await startAndRead('gret')).toBe('now');
    expect(specReads.filter((read) => read.name === 'gret')).toHaveLength(2);
  });

  it('an inline start without a spec is invalid_tool_input on spec', async () => {
    const developer = { ...principal, role: 'developer' as const };
    const { error } = await rejectionOf(
      client.call(
        'run',
        runOps,
        'run.start',
        { dagName: 'inline-none', inline: true, enqueue: false },
        { principal: developer },
      ),
    );
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe('spec');
  });

  it('YAML sent over the bus with a stored DAG is refused: a stored DAG goes by name (dagu-model §9)', async () => {
    stored.set('given', say('stored'));
    const { error } = await rejectionOf(
      call('run.start', { dagName: 'given', spec: say('mine'), inline: false, enqueue: false }),
    );
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe('spec');
    expect((await call('run.list', { name: 'given' })).items).toEqual([]);
  });

  it('dag-service silent: resource_unavailable naming dag-service before the deadline, not applied, nothing written', async () => {
    const started = Date.now();
    const { error } = await rejectionOf(
      client.call(
        'run',
        runOps,
        'run.start',
        { dagName: 'silent', inline: false, enqueue: false },
        { principal, timeoutMs: 3000 },
      ),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toContain('dag-service');
    expect(error.details).toEqual({ service: 'dag-service', outcome: 'not_applied' });
    expect((await call('run.list', { name: 'silent' })).items).toEqual([]);
  });
});
