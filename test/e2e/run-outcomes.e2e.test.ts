/**
 * Run outcomes as Dagu ends them (dagu-model §3 "Run outcome"; issue 19
 * item 3): one test per rule, through the real stack and the SDK client —
 * the DAG stored with `dagu_change`, started with `dagu_execute` and waited
 * for. Where a real Dagu file stands for the rule (the `intg-*` files of the
 * dagu-examples), that file is what runs.
 */
import { readFileSync } from 'node:fs';
import { daguExample } from '../../packages/dag-spec/test-fixtures/dagu-examples';
import { useStackAndClient } from './stack';

interface Step {
  name: string;
  status: number;
  statusLabel: string;
  error?: string;
  startedAt?: string;
  subRuns?: Array<{ dagRunId: string; uri: string; dagName: string }>;
}
interface Run {
  status: number;
  statusLabel: string;
  dagRunId: string;
  error?: string;
  steps: Step[];
  handlers?: Record<string, { status: number }>;
}

const e2e = useStackAndClient();

/** Stores `spec` as DAG `name`, starts it and waits for its end; the run detail of 036. */
async function runToEnd(name: string, spec: string): Promise<Run> {
  const applied = await e2e.client.callTool({ name: 'dagu_change', arguments: { name, spec, mode: 'apply' } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
  const started = await e2e.client.callTool(
    { name: 'dagu_execute', arguments: { action: 'start', name, wait: true, waitTimeoutSeconds: 45 } },
    undefined,
    { timeout: 55_000 },
  );
  const sc = started.structuredContent as { completed: boolean; run: Run };
  expect(sc.completed).toBe(true);
  return sc.run;
}

function example(file: string): string {
  return readFileSync(daguExample(file), 'utf8');
}

function step(run: Run, name: string): Step {
  const found = run.steps.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no step ${name} in ${JSON.stringify(run.steps.map((s) => s.name))}`);
  return found;
}

describe('aborted (3)', () => {
  test('a DAG-level precondition not met: no init, no step', async () => {
    const run = await runToEnd('out-precondition', example('intg-dag-precondition-false.yaml'));
    expect(run).toMatchObject({ status: 3, statusLabel: 'aborted' });
    expect(step(run, 'step1').status).toBe(0);
    expect(run.handlers?.onInit).toMatchObject({ status: 0 });
  }, 60_000);

  test('a failing init handler: no step starts, the exit handler still runs', async () => {
    const run = await runToEnd('out-init-fails', example('intg-init-handler-fails.yaml'));
    expect(run).toMatchObject({ status: 3, statusLabel: 'aborted' });
    expect(step(run, 'step1')).toMatchObject({ status: 0, statusLabel: 'not_started' });
    expect(step(run, 'step1').startedAt).toBeUndefined();
    expect(run.handlers).toMatchObject({ onInit: { status: 2 }, onExit: { status: 4 } });
  }, 60_000);
});

describe('failed (2)', () => {
  test('a step fails and continue_on does not let the run go on; its dependant does not run', async () => {
    const run = await runToEnd(
      'out-failed',
      'steps:\n  - {name: ok, run: "true"}\n  - {name: bad, run: exit 2, depends: [ok]}\n  - {name: after, run: "true", depends: [bad]}\n',
    );
    expect(run).toMatchObject({ status: 2, statusLabel: 'failed' });
    expect(step(run, 'bad').status).toBe(2);
    expect(step(run, 'after').status).toBe(3);
  }, 60_000);

  test('a lone step failing under continue_on: nothing succeeded, so failed', async () => {
    const run = await runToEnd('out-single-continue', example('intg-single-step-continue-on.yaml'));
    expect(run).toMatchObject({ status: 2, statusLabel: 'failed' });
    expect(step(run, 'fail-step').status).toBe(2);
  }, 60_000);
});

describe('partially_succeeded (6)', () => {
  test('a failure under continue_on and a success', async () => {
    const run = await runToEnd('out-partial', example('intg-partial-success.yaml'));
    expect(run).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    expect(step(run, 'fail-step').status).toBe(2);
    expect(step(run, 'success-step').status).toBe(4);
  }, 60_000);

  test('a foreach with one failing item of two is partially succeeded, and the step after it runs', async () => {
    const run = await runToEnd(
      'out-foreach-partial',
      `steps:
  - id: loop
    foreach:
      items: [good, bad]
      as: item
      steps:
        - id: check
          run: test "\${foreach.item}" = good
  - id: after
    depends: [loop]
    run: echo after
`,
    );
    expect(run).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    expect(step(run, 'loop')).toMatchObject({
      status: 6,
      statusLabel: 'partially_succeeded',
      error: '1 of 2 foreach items failed',
    });
    expect(step(run, 'after')).toMatchObject({ status: 4 });
  }, 60_000);

  test('a parent whose child run ends partially_succeeded (intg-subdag-child-partial)', async () => {
    const run = await runToEnd('out-child-partial', example('intg-subdag-child-partial.yaml'));
    expect(run).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    const call = step(run, 'parallel-tasks');
    expect(call).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
    const child = call.subRuns?.[0];
    expect(child?.dagName).toBe('worker-dag');
    const read = await e2e.client.callTool({ name: 'dagu_read', arguments: { uri: child?.uri ?? '' } });
    expect(read.structuredContent).toMatchObject({ data: { statusLabel: 'partially_succeeded' } });
  }, 60_000);
});

describe('waiting (7) through a dag.run', () => {
  test('a child run parked at a checkpoint makes the step and the parent run waiting', async () => {
    const spec = `steps:
  - name: call
    action: dag.run
    with: {dag: gate}
  - {name: after, run: echo after, depends: [call]}
---
name: gate
steps:
  - name: ask
    run: echo ask
    approval: {prompt: go?}
`;
    const applied = await e2e.client.callTool({
      name: 'dagu_change',
      arguments: { name: 'out-waiting', spec, mode: 'apply' },
    });
    expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
    const started = await e2e.client.callTool(
      { name: 'dagu_execute', arguments: { action: 'start', name: 'out-waiting', wait: true, waitTimeoutSeconds: 45 } },
      undefined,
      { timeout: 55_000 },
    );
    const sc = started.structuredContent as { completed: boolean; run: Run };
    expect(sc).toMatchObject({ completed: false, run: { status: 7, statusLabel: 'waiting' } });
    const dagRunId = sc.run.dagRunId;
    // The step's state write may trail the run's status by a moment: read until it shows.
    let run = sc.run;
    for (const until = Date.now() + 5000; step(run, 'call').status !== 7 && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const read = await e2e.client.callTool({
        name: 'dagu_read',
        arguments: { target: 'run', name: 'out-waiting', dagRunId },
      });
      run = (read.structuredContent as { data: Run }).data;
    }
    expect(step(run, 'call')).toMatchObject({ status: 7, statusLabel: 'waiting' });
    expect(step(run, 'after').status).toBe(0);
    const stopped = await e2e.client.callTool({
      name: 'dagu_execute',
      arguments: { action: 'stop', name: 'out-waiting', dagRunId },
    });
    expect(stopped.isError).not.toBe(true);
  }, 60_000);
});

describe('succeeded (4) and the foreach rules', () => {
  test('a failure with mark_success counts as a success', async () => {
    const run = await runToEnd('out-mark-success', example('intg-mark-success.yaml'));
    expect(run).toMatchObject({ status: 4, statusLabel: 'succeeded' });
    expect(step(run, 'fail-step').status).toBe(4);
  }, 60_000);

  test('every foreach item succeeded → succeeded; every item failed → failed', async () => {
    const good = await runToEnd('out-foreach-good', example('schema-foreach-collect.yaml'));
    expect(good).toMatchObject({ status: 4 });
    expect(step(good, 'summarize').status).toBe(4);
    const bad = await runToEnd(
      'out-foreach-bad',
      'steps:\n  - id: loop\n    foreach:\n      items: [a, b]\n      steps:\n        - {id: no, run: exit 1}\n  - {id: after, run: "true", depends: [loop]}\n',
    );
    expect(bad).toMatchObject({ status: 2, statusLabel: 'failed' });
    expect(step(bad, 'loop')).toMatchObject({ status: 2, error: '2 of 2 foreach items failed' });
    expect(step(bad, 'after').status).toBe(3);
  }, 90_000);
});
