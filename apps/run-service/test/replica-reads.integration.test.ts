import { ReplicaDeclined } from '@dagu-mcp/runtime';
import { createRunTestEnv, testContext, type RunTestEnv } from '../test-fixtures/run-test-env';
import { RunStatus } from '@dagu-mcp/contracts';
import { createRunGetHandler } from '../src/handlers/run-get.handler';
import { createRunListHandler } from '../src/handlers/run-list.handler';
import { createRunLogsHandler } from '../src/handlers/run-logs.handler';
import { createRunStepLogHandler } from '../src/handlers/run-step-log.handler';

/**
 * Issue 47: run-service's handlers built over a replica (`endedOnly`) serve
 * ended runs and decline running ones (`ReplicaDeclined`), which the read
 * router re-runs on the primary (packages/service-kit
 * read-replica.integration.test.ts proves that re-run on a real standby). The
 * flag is all that differs between the two pools, so the machine's PostgreSQL
 * stands in for both here.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('replica-reads');
});
afterAll(async () => {
  await env.close();
});

it('declines a running run and its running step on the replica, and serves them once ended', async () => {
  const id = await env.start('slow', "steps:\n  - name: wait\n    run: 'echo started; sleep 1.5'\n");
  const get = createRunGetHandler(env.pool, true);
  const logs = createRunLogsHandler(env.pool, 1 << 20, true);
  const stepLog = createRunStepLogHandler(env.pool, 1 << 20, true);
  const address = { dagName: 'slow', dagRunId: id };
  const ctx = testContext();
  await expect(get(address, ctx)).rejects.toBeInstanceOf(ReplicaDeclined);
  await expect(logs(address, ctx)).rejects.toBeInstanceOf(ReplicaDeclined);
  await expect(stepLog({ ...address, stepName: 'wait' }, ctx)).rejects.toBeInstanceOf(ReplicaDeclined);
  // On the primary (endedOnly false) the running run is served.
  await expect(createRunGetHandler(env.pool)(address, ctx)).resolves.toMatchObject({ dagRunId: id });

  await env.waitForEnd('slow', id);
  await expect(get(address, ctx)).resolves.toMatchObject({ dagRunId: id, statusLabel: 'succeeded' });
  await expect(logs(address, ctx)).resolves.toMatchObject({ stepLogs: [{ stepName: 'wait' }] });
  await expect(stepLog({ ...address, stepName: 'wait' }, ctx)).resolves.toMatchObject({ stdoutContent: 'started' });
}, 30_000);

it('declines a list asking for active runs on the replica (the rename check), serves any other list', async () => {
  const list = createRunListHandler(env.pool, true);
  const ctx = testContext();
  await expect(list({ status: [RunStatus.running, RunStatus.queued], limit: 1 }, ctx)).rejects.toBeInstanceOf(
    ReplicaDeclined,
  );
  await expect(list({ status: [RunStatus.succeeded], name: 'slow' }, ctx)).resolves.toMatchObject({
    items: [{ name: 'slow', statusLabel: 'succeeded' }],
  });
  await expect(list({ name: 'slow' }, ctx)).resolves.toMatchObject({ items: [{ name: 'slow' }] });
});
