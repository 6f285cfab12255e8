import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';
import { readStepLog } from '../src/read/run-logs';
import { DAGU_EXAMPLES_DIR } from '../../../packages/dag-spec/test-fixtures/dagu-examples';

/**
 * The engine against the real PostgreSQL: graph semantics of dagu-model §3
 * and the outcomes the dagu-examples intg-*.yaml files stand for.
 */
/** The Dagu example DAGs kept in the repo (dag-spec's fixtures). */
const EXAMPLES = DAGU_EXAMPLES_DIR;
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('graph');
});
afterAll(async () => {
  await env.close();
});

async function run(name: string, spec: string, params?: string) {
  const id = await env.start(name, spec, params !== undefined ? { params } : {});
  return env.waitForEnd(name, id);
}

function example(file: string): string {
  return readFileSync(join(EXAMPLES, file), 'utf8');
}

async function stdoutOf(name: string, dagRunId: string, stepName: string): Promise<string> {
  return (await readStepLog(env.pool, { dagName: name, dagRunId, stepName })).stdoutContent;
}

describe('continue_on and the status rollup (intg examples)', () => {
  it('intg-partial-success: a failure allowed by continue_on + a success → partially_succeeded', async () => {
    const detail = await run('partial', example('intg-partial-success.yaml'));
    expect(detail.statusLabel).toBe('partially_succeeded');
    expect(stepOf(detail, 'fail-step')).toMatchObject({ status: 2, error: 'exit status 1' });
    expect(stepOf(detail, 'success-step').status).toBe(4);
  });

  it('intg-single-step-continue-on: only an allowed failure → failed', async () => {
    const detail = await run('single', example('intg-single-step-continue-on.yaml'));
    expect(detail.statusLabel).toBe('failed');
    expect(stepOf(detail, 'fail-step').status).toBe(2);
  });

  it('intg-mark-success: mark_success turns the failed step into succeeded', async () => {
    const detail = await run('marked', example('intg-mark-success.yaml'));
    expect(detail.statusLabel).toBe('succeeded');
    expect(stepOf(detail, 'fail-step').status).toBe(4);
  });

  it('a plain failure cancels its dependents, independent branches still run', async () => {
    const detail = await run(
      'branches',
      `steps:
  - {name: bad, run: exit 3}
  - {name: after-bad, run: echo no, depends: [bad]}
  - {name: after-after, run: echo no, depends: [after-bad]}
  - {name: other, run: echo yes}
`,
    );
    expect(detail.statusLabel).toBe('failed');
    expect(stepOf(detail, 'bad')).toMatchObject({ status: 2, error: 'exit status 3', exitCode: 3 });
    expect(stepOf(detail, 'after-bad').status).toBe(3);
    expect(stepOf(detail, 'after-after').status).toBe(3);
    expect(stepOf(detail, 'other').status).toBe(4);
  });

  it('continue_on.exit_code and continue_on.output let dependents run', async () => {
    const detail = await run(
      'codes',
      `steps:
  - {name: a, run: exit 4, continue_on: {exit_code: [4]}}
  - {name: b, run: "echo WARNING: tolerable; exit 1", continue_on: {output: ["re:^WARN"]}}
  - {name: c, run: echo done, depends: [a, b]}
`,
    );
    expect(stepOf(detail, 'c').status).toBe(4);
    expect(detail.statusLabel).toBe('partially_succeeded');
  });
});

describe('preconditions', () => {
  it('a step precondition not met skips the step and its dependents; continue_on.skipped lets them run', async () => {
    const detail = await run(
      'pre',
      `params: "MODE=dev"
steps:
  - name: gated
    run: echo gated
    preconditions: [{condition: "\${MODE}", expected: prod}]
  - {name: after-gated, run: echo x, depends: [gated]}
  - name: gated-ok
    run: echo y
    preconditions: [{condition: "test \\"$MODE\\" = dev"}]
  - name: tolerant
    run: echo z
    preconditions: "false"
    continue_on: skipped
  - {name: after-tolerant, run: echo w, depends: [tolerant]}
`,
    );
    expect(detail.statusLabel).toBe('succeeded');
    expect(stepOf(detail, 'gated').status).toBe(5);
    expect(stepOf(detail, 'after-gated').status).toBe(5);
    expect(stepOf(detail, 'gated-ok').status).toBe(4);
    expect(stepOf(detail, 'tolerant').status).toBe(5);
    expect(stepOf(detail, 'after-tolerant').status).toBe(4);
  });

  it('intg-dag-precondition-false: the run is aborted, init and steps do not run', async () => {
    const detail = await run('dagpre', example('intg-dag-precondition-false.yaml'));
    expect(detail.statusLabel).toBe('aborted');
    expect(detail.error).toMatch(/precondition not met/);
    expect(stepOf(detail, 'step1').status).toBe(0);
    expect(detail.handlers).toMatchObject({ onInit: { status: 0 } });
  });

  it('v1-define-condition: positional params in value-match conditions', async () => {
    const detail = await run('define', example('v1-define-condition.yaml'));
    expect(stepOf(detail, 'foo').status).toBe(4);
    expect(stepOf(detail, 'bar').status).toBe(5);
  });
});

describe('handlers', () => {
  it('intg-init-handler-fails: the run is aborted, no step starts, exit runs (dagu-model §3 "Run outcome")', async () => {
    const detail = await run('initfail', example('intg-init-handler-fails.yaml'));
    expect(detail).toMatchObject({ status: 3, statusLabel: 'aborted', error: 'init handler onInit did not succeed' });
    expect(stepOf(detail, 'step1')).toMatchObject({ status: 0 });
    expect(stepOf(detail, 'step1')).not.toHaveProperty('startedAt');
    expect(detail.handlers).toMatchObject({ onInit: { status: 2 }, onExit: { status: 4 } });
    expect(await stdoutOf('initfail', detail.dagRunId, 'step1')).toBe('');
  });

  it('a failing init handler runs the abort handler, not failure', async () => {
    const detail = await run(
      'initfail-abort',
      `handler_on:
  init: {run: exit 1}
  failure: {run: echo failure}
  abort: {run: echo abort}
  exit: {run: echo exit}
steps:
  - {name: a, run: echo a}
  - {name: b, run: echo b, depends: [a]}
`,
    );
    expect(detail.statusLabel).toBe('aborted');
    expect(detail.steps.map((s) => s.status)).toEqual([0, 0]);
    expect(detail.handlers).toMatchObject({ onAbort: { status: 4 }, onExit: { status: 4 } });
    expect(detail.handlers).not.toHaveProperty('onFailure.startedAt');
  });

  it('success/failure handlers follow the outcome and exit runs last', async () => {
    const spec = (cmd: string) => `handler_on:
  success: {run: echo ok}
  failure: {run: echo failed-with-$DAG_RUN_ID}
  exit: {run: echo bye}
steps:
  - {name: main, run: "${cmd}"}
`;
    const good = await run('handlers-good', spec('true'));
    expect(good.handlers).toMatchObject({ onSuccess: { status: 4 }, onExit: { status: 4 } });
    expect(good.handlers).not.toHaveProperty('onFailure.startedAt');
    const bad = await run('handlers-bad', spec('false'));
    expect(bad.statusLabel).toBe('failed');
    expect(bad.handlers).toMatchObject({ onFailure: { status: 4 }, onExit: { status: 4 } });
    expect(await stdoutOf('handlers-bad', bad.dagRunId, 'onFailure')).toBe(`failed-with-${bad.dagRunId}`);
  });

  it('a failing exit handler fails an otherwise successful run', async () => {
    const detail = await run('exitfail', 'handler_on: {exit: {run: exit 1}}\nsteps: [{name: a, run: "true"}]\n');
    expect(detail.statusLabel).toBe('failed');
  });
});

describe('commands, env, params and outputs', () => {
  it('a missing command fails its step with the shell message in error and stderr', async () => {
    const detail = await run('missing', 'steps: [{name: a, run: no_such_command_xyz --flag}]\n');
    expect(detail.statusLabel).toBe('failed');
    const step = stepOf(detail, 'a');
    expect(step.error).toMatch(/exit status 127: .*no_such_command_xyz.*not found/);
    const log = await readStepLog(env.pool, { dagName: 'missing', dagRunId: detail.dagRunId, stepName: 'a' });
    expect(log.stderrContent).toMatch(/no_such_command_xyz.*not found/);
  });

  it('v1-pass-parameters: params are exported to the shell; run params override defaults', async () => {
    const first = await run('params', example('v1-pass-parameters.yaml'));
    expect(await stdoutOf('params', first.dagRunId, 'step1')).toBe('foo-bar');
    const second = await run('params', example('v1-pass-parameters.yaml'), '{"BAR":"baz"}');
    expect(await stdoutOf('params', second.dagRunId, 'step1')).toBe('foo-baz');
    expect(second.params).toBe('FOO=foo BAR=baz');
  });

  it('exports the engine variables and merges DAG env, step env and backticks', async () => {
    const detail = await run(
      'vars',
      `env:
  - BASE: /data
  - DIR: \${BASE}/in
  - STAMP: "\`echo computed\`"
steps:
  - name: show
    env: [{LOCAL: "\${DIR}/x"}]
    run: echo "$DAG_NAME|$DAG_RUN_STEP_NAME|$LOCAL|$STAMP|\${context.run.id}|$DAG_RUN_ID"
`,
    );
    expect(await stdoutOf('vars', detail.dagRunId, 'show')).toBe(
      `vars|show|/data/in/x|computed|${detail.dagRunId}|${detail.dagRunId}`,
    );
  });

  it('conf-valid-string-output: outputs written to $DAGU_OUTPUT_FILE reach later steps', async () => {
    const detail = await run(
      'outs',
      `${example('conf-valid-string-output.yaml')}
  - id: show
    depends: deploy
    run: cat resolved-string.txt
`,
    );
    expect(detail.statusLabel).toBe('succeeded');
    expect(stepOf(detail, 'build')).toMatchObject({ outputs: { image_tag: 'v1.2.3' } });
    expect(await stdoutOf('outs', detail.dagRunId, 'show')).toBe('v1.2.3');
  });

  it('a declared output that is not written fails the step', async () => {
    const detail = await run('outs-missing', 'steps: [{id: a, run: "true", outputs: [x]}]\n');
    expect(stepOf(detail, 'a').error).toMatch(/declared outputs not written.*x/);
  });

  it('output variables and structured output fields', async () => {
    const detail = await run(
      'outvar',
      `steps:
  - id: produce
    run: "echo '{\\"title\\": \\"hello\\", \\"n\\": [1, 2]}'"
    output:
      title: {from: stdout, decode: json, select: .title}
      second: {from: stdout, decode: json, select: ".n[1]"}
  - id: var
    run: echo '  spaced value  '
    output: VALUE
  - id: use
    depends: [produce, var]
    run: echo "\${produce.output.title}-\${produce.output.second}-\${VALUE}-$VALUE-\${produce.exit_code}"
`,
    );
    expect(await stdoutOf('outvar', detail.dagRunId, 'use')).toBe('hello-2-spaced value-spaced value-0');
  });

  it('chain DAGs run in order; max_active_steps bounds parallel branches', async () => {
    const chain = await run('chain', example('v1-int-chain.yaml'));
    const starts = chain.steps.map((step) => step.startedAt ?? '');
    expect([...starts].sort()).toEqual(starts);
    const parallel = await run(
      'parallel',
      `max_active_steps: 2
steps:
${[1, 2, 3, 4].map((i) => `  - {name: p${i}, run: "sleep 0.3"}`).join('\n')}
`,
    );
    // The most steps running at one moment, from their own timestamps (load-independent).
    const spans = parallel.steps.map(
      (step) => [Date.parse(step.startedAt ?? ''), Date.parse(step.finishedAt ?? '')] as const,
    );
    const overlap = Math.max(...spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length));
    expect(overlap).toBe(2);
  });

  it('scripts, a step shell, legacy argv commands and working directories', async () => {
    const detail = await run(
      'forms',
      `params: "first NAME=world"
steps:
  - name: script
    run: |
      greeting="hello"
      echo "$greeting $NAME $1"
  - name: bash
    shell: bash -e
    run: 'arr=(a b); echo "\${arr[1]} \${params.NAME}"'
  - name: argv
    command: [echo, "$NAME", "\${params.NAME}"]
  - name: sub
    run: mkdir -p inner && echo x > inner/f
  - name: cwd
    depends: [sub]
    working_dir: inner
    run: cat f && pwd
  - name: nowhere
    working_dir: /no/such/dir
    run: "true"
`,
    );
    expect(await stdoutOf('forms', detail.dagRunId, 'script')).toBe('hello world first');
    expect(await stdoutOf('forms', detail.dagRunId, 'bash')).toBe('b world');
    expect(await stdoutOf('forms', detail.dagRunId, 'argv')).toBe('world world');
    expect(await stdoutOf('forms', detail.dagRunId, 'cwd')).toMatch(/^x\n.*\/forms\/[^/]+\/inner$/);
    expect(stepOf(detail, 'nowhere')).toMatchObject({
      status: 2,
      error: 'working directory /no/such/dir does not exist',
    });
  });

  it('a dag.run of a missing DAG fails its step without crashing the engine', async () => {
    const detail = await run('unsupported', example('intg-subdag-missing-child.yaml'));
    expect(detail.statusLabel).toBe('failed');
    expect(stepOf(detail, 'run-missing-dag').error).toMatch(/sub-DAG non-existent-dag not found/);
  });
});
