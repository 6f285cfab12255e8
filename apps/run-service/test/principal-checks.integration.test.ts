import { DaguError, type Principal, type Role } from '@dagu-mcp/contracts';
import { completeHumanTask, decideApproval } from '../src/runs/checkpoint-resume';
import { retryRun } from '../src/runs/run-retry';
import { startRun } from '../src/runs/run-start';
import { stopRun } from '../src/runs/run-stop';
import { SCHEDULER_PRINCIPAL } from '../src/schedule/scheduled-start';
import { RUN_SERVICE_PRINCIPAL } from '../src/runs/stored-dag-specs';
import { createRunTestEnv, testContext, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * run-service re-checks the principal's role for every mutation it performs
 * (dagu-model §9, docs/security.md): the gateway's check is not taken on
 * faith, and its own system principals keep exactly the rights they need.
 */
let env: RunTestEnv;
beforeAll(async () => {
  env = await createRunTestEnv('principal_checks');
});
afterAll(() => env.close());

const as = (role: Role): Principal => ({ id: `u-${role}`, subject: role, role, credentialType: 'api_key' });
const SPEC = 'steps:\n  - name: a\n    run: "true"\n';

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error: unknown) {
    return error;
  }
  throw new Error('expected a refusal');
}

const runCount = async (): Promise<number> =>
  Number((await env.pool.query('SELECT count(*) AS n FROM runs')).rows[0]?.n);

describe('run-service mutations re-check the role', () => {
  it('a viewer starts nothing; an operator starts stored DAGs but not YAML of its own (inline is authoring)', async () => {
    const before = await runCount();
    for (const [role, inline] of [
      ['viewer', false],
      ['operator', true],
    ] as const) {
      const error = await refusal(
        startRun(env.deps, { dagName: 'guarded', spec: SPEC, inline, enqueue: false }, testContext(10_000, as(role))),
      );
      expect(error).toBeInstanceOf(DaguError);
      expect(error).toMatchObject({ code: 'unauthorized' });
    }
    expect(await runCount()).toBe(before);
    const stored = await startRun(
      env.deps,
      { dagName: 'guarded', spec: SPEC, inline: false, enqueue: false },
      testContext(10_000, as('operator')),
    );
    const inline = await startRun(
      env.deps,
      { dagName: 'guarded', spec: SPEC, inline: true, enqueue: false },
      testContext(10_000, as('developer')),
    );
    await env.waitForEnd('guarded', stored.dagRunId);
    await env.waitForEnd('guarded', inline.dagRunId);
  });

  it('a viewer neither stops, retries nor decides a checkpoint of a run', async () => {
    const dagRunId = await env.start('guarded', SPEC);
    await env.waitForEnd('guarded', dagRunId);
    const viewer = testContext(10_000, as('viewer'));
    const ref = { dagName: 'guarded', dagRunId };
    for (const attempt of [
      retryRun(env.deps, ref, viewer),
      stopRun(env.deps, ref, viewer),
      completeHumanTask(env.deps, { ...ref, stepName: 'a', values: {} }, viewer),
      decideApproval(env.deps, { ...ref, stepName: 'a', decision: 'approve' }, viewer),
    ]) {
      expect(await refusal(attempt)).toMatchObject({ code: 'unauthorized' });
    }
    const retried = await retryRun(env.deps, ref, testContext(10_000, as('operator')));
    expect(retried.attemptId).toBeDefined();
    await env.waitForEnd('guarded', dagRunId);
  });

  it("run-service's own principals keep exactly what they need: the scheduler starts stored DAGs only, sub-DAG reads are viewer", async () => {
    expect(SCHEDULER_PRINCIPAL.role).toBe('operator');
    expect(RUN_SERVICE_PRINCIPAL.role).toBe('viewer');
    const scheduled = await startRun(
      env.deps,
      { dagName: 'guarded', spec: SPEC, inline: false, enqueue: false },
      testContext(10_000, SCHEDULER_PRINCIPAL),
    );
    await env.waitForEnd('guarded', scheduled.dagRunId);
    expect(
      await refusal(
        startRun(
          env.deps,
          { dagName: 'guarded', spec: SPEC, inline: true, enqueue: false },
          testContext(10_000, SCHEDULER_PRINCIPAL),
        ),
      ),
    ).toMatchObject({ code: 'unauthorized' });
  });
});
