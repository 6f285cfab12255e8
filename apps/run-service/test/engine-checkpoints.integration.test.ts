import type { RunDetail } from '@dagu-mcp/contracts';
import { completeHumanTask, decideApproval } from '../src/runs/checkpoint-resume';
import { readStepLog } from '../src/read/run-logs';
import { stopRun } from '../src/runs/run-stop';
import { daguErrorOf } from '../../../packages/contracts/test-fixtures/dagu-error-of';
import { createRunTestEnv, stepOf, testContext, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Checkpoints against the real PostgreSQL (dagu-model §1 status 7, §3
 * human.task / approval; 021 `humanTask`, `approval`): the run parks with the
 * prompt and form in its detail, the `wait` handler runs, a decision resumes
 * it as a new attempt (or rejects it, or with rewind_to runs the rewound
 * steps again), and a stop ends a waiting run.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('checkpoints');
});
afterAll(async () => {
  await env.close();
});

async function waitForStatus(name: string, id: string, status: number, timeoutMs = 10_000): Promise<RunDetail> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = await env.detail(name, id);
    if (run.status === status) return run;
    if (Date.now() > until) throw new Error(`run ${id} is ${run.statusLabel}, expected ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return (await daguErrorOf(promise)).code;
}

const HUMAN = `params: TARGET=eu
handler_on:
  wait:
    run: echo waiting-handler
steps:
  - id: review
    action: human.task
    with:
      prompt: Choose a target for \${TARGET}
      form:
        type: object
        properties:
          environment: {type: string, enum: [staging, production]}
          note: {type: string, default: ""}
        required: [environment]
  - id: deploy
    depends: [review]
    run: echo "deploy \${steps.review.outputs.environment}"
    output: DEPLOYED
`;

describe('human.task', () => {
  it('parks at 7 with prompt and form, runs the wait handler, validates values, then resumes and succeeds', async () => {
    const id = await env.start('ht', HUMAN);
    const waiting = await waitForStatus('ht', id, 7);
    expect(stepOf(waiting, 'review')).toMatchObject({
      status: 7,
      humanTask: { prompt: 'Choose a target for eu', form: { required: ['environment'] } },
    });
    expect(stepOf(waiting, 'deploy').status).toBe(0);
    expect(waiting.humanTaskResumePending).toBe(false);
    expect(waiting.handlers).toMatchObject({ onWait: { status: 4 } });
    expect(waiting.finishedAt).toBeUndefined();
    expect(
      await codeOf(
        completeHumanTask(
          env.deps,
          { dagName: 'ht', dagRunId: id, stepName: 'review', values: { environment: 'dev' } },
          testContext(),
        ),
      ),
    ).toBe('invalid_tool_input');
    expect(
      await codeOf(
        completeHumanTask(env.deps, { dagName: 'ht', dagRunId: id, stepName: 'deploy', values: {} }, testContext()),
      ),
    ).toBe('conflict');
    const ref = await completeHumanTask(
      env.deps,
      { dagName: 'ht', dagRunId: id, stepName: 'review', values: { environment: 'staging' } },
      testContext(),
    );
    expect(ref).toMatchObject({ status: 1 });
    const done = await env.waitForEnd('ht', id);
    expect(done.status).toBe(4);
    expect(done.attemptNo).toBe(2);
    expect(stepOf(done, 'review')).toMatchObject({ status: 4, outputs: { environment: 'staging', note: '' } });
    expect(stepOf(done, 'deploy')).toMatchObject({ status: 4, outputs: { DEPLOYED: 'deploy staging' } });
    expect(env.publisher.events.filter((e) => e.dagRunId === id).map((e) => e.status)).toEqual([1, 7, 1, 4]);
  });
});

const GATE = `type: graph
steps:
  - name: before
    run: echo before
  - name: gate
    depends: [before]
    run: echo gate-ran
    approval:
      prompt: Ship it?
      input: [FEEDBACK]
      required: [FEEDBACK]
  - name: after
    depends: [gate]
    run: echo "after \${FEEDBACK}"
`;

describe('approval', () => {
  it('approve: required input checked, the gate succeeds with its input as outputs, dependents run', async () => {
    const id = await env.start('gate', GATE);
    const waiting = await waitForStatus('gate', id, 7);
    expect(stepOf(waiting, 'gate')).toMatchObject({
      status: 7,
      approval: { prompt: 'Ship it?', input: ['FEEDBACK'], required: ['FEEDBACK'] },
    });
    expect(
      await codeOf(
        decideApproval(
          env.deps,
          { dagName: 'gate', dagRunId: id, stepName: 'gate', decision: 'approve' },
          testContext(),
        ),
      ),
    ).toBe('invalid_tool_input');
    await decideApproval(
      env.deps,
      { dagName: 'gate', dagRunId: id, stepName: 'gate', decision: 'approve', input: { FEEDBACK: 'lgtm' } },
      testContext(),
    );
    const done = await env.waitForEnd('gate', id);
    expect(done.status).toBe(4);
    expect(stepOf(done, 'gate')).toMatchObject({ status: 4, outputs: { FEEDBACK: 'lgtm' } });
    expect(stepOf(done, 'after').status).toBe(4);
  });

  it('reject: the gate and the run end rejected (8); dependents never run', async () => {
    const id = await env.start('gate', GATE);
    await waitForStatus('gate', id, 7);
    const ref = await decideApproval(
      env.deps,
      { dagName: 'gate', dagRunId: id, stepName: 'gate', decision: 'reject' },
      testContext(),
    );
    expect(ref).toMatchObject({ status: 8, statusLabel: 'rejected' });
    const done = await env.waitForEnd('gate', id);
    expect(done).toMatchObject({ status: 8, error: 'the approval of step gate was rejected' });
    expect(stepOf(done, 'gate').status).toBe(8);
    expect(stepOf(done, 'after').status).toBe(0);
  });

  it('stop ends a waiting run: aborted, the waiting step aborted', async () => {
    const id = await env.start('gate', GATE);
    await waitForStatus('gate', id, 7);
    const ref = await stopRun(env.deps, { dagName: 'gate', dagRunId: id }, testContext());
    expect(ref).toMatchObject({ status: 3 });
    const done = await env.detail('gate', id);
    expect(stepOf(done, 'gate').status).toBe(3);
    expect(
      await codeOf(
        decideApproval(
          env.deps,
          { dagName: 'gate', dagRunId: id, stepName: 'gate', decision: 'approve' },
          testContext(),
        ),
      ),
    ).toBe('conflict');
  });

  it('reject with rewind_to: the steps from the target to the gate run again with the feedback, the gate waits again', async () => {
    const spec = `steps:
  - name: prepare
    run: echo prepare
  - name: build
    depends: [prepare]
    run: echo "build feedback=\${FEEDBACK:-none}"
  - name: side
    depends: [prepare]
    run: echo side
  - name: gate
    depends: [build]
    run: echo gate-ran
    approval:
      prompt: Ship build?
      input: [FEEDBACK]
      rewind_to: build
  - name: after
    depends: [gate]
    run: echo after
`;
    const id = await env.start('rewind', spec);
    await waitForStatus('rewind', id, 7);
    const ref = await decideApproval(
      env.deps,
      { dagName: 'rewind', dagRunId: id, stepName: 'gate', decision: 'reject', input: { FEEDBACK: 'more tests' } },
      testContext(),
    );
    expect(ref).toMatchObject({ status: 1 });
    const again = await waitForStatus('rewind', id, 7);
    expect(again).toMatchObject({ attemptNo: 2 });
    expect(stepOf(again, 'gate')).toMatchObject({ status: 7, approval: { prompt: 'Ship build?' } });
    expect(stepOf(again, 'after').status).toBe(0);
    const log = (stepName: string) =>
      readStepLog(env.pool, { dagName: 'rewind', dagRunId: id, stepName }).then((read) => read.stdoutContent);
    expect(await log('build')).toBe('build feedback=more tests');
    // Kept (not on the path build → gate): one execution, its log unchanged.
    expect([await log('prepare'), await log('side')]).toEqual(['prepare', 'side']);
    await decideApproval(
      env.deps,
      { dagName: 'rewind', dagRunId: id, stepName: 'gate', decision: 'approve', input: { FEEDBACK: 'ok' } },
      testContext(),
    );
    const done = await env.waitForEnd('rewind', id);
    expect(done).toMatchObject({ status: 4, attemptNo: 3 });
    expect(stepOf(done, 'after').status).toBe(4);
    expect(await log('build')).toBe('build feedback=more tests');
    expect(env.publisher.events.filter((e) => e.dagRunId === id).map((e) => e.status)).toEqual([1, 7, 1, 7, 1, 4]);
  });
});
