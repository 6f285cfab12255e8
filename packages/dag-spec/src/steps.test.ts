/**
 * Step rules (dagu-model.md §2–4): what a step runs, names and ids,
 * depends/chain/cycles, actions, foreach, approval, policies, defaults.
 */
import { parseDagSpec, type NormalizedStep } from './index';

function errorsOf(steps: string, root = ''): string[] {
  return parseDagSpec(`${root}steps:\n${steps}`, { name: 't' }).errors;
}

function stepsOf(steps: string, root = ''): NormalizedStep[] {
  const result = parseDagSpec(`${root}steps:\n${steps}`, { name: 't' });
  if (!result.dag) throw new Error(result.errors.join('\n'));
  return result.dag.steps;
}

describe('step errors', () => {
  it.each<[string, string, string[]]>([
    ['nothing to run', '  - name: a\n', ["step 'a': field 'command': step command is required"]],
    ['empty run', '  - name: a\n    run: ""\n', ["step 'a': field 'command': step command is required"]],
    ['unknown step key', '  - name: a\n    run: x\n    foo: 1\n', ["step 'a': field 'foo': unknown field"]],
    [
      'unsupported step key',
      '  - name: a\n    run: x\n    container: {image: y}\n',
      ["step 'a': field 'container': containers are not supported here"],
    ],
    [
      'docker executor without image or container (dagu-actions §1.6)',
      '  - name: a\n    command: x\n    executor: {type: docker}\n',
      ["step 'a': field 'config': config.image or config.container_name is required (create or exec mode)"],
    ],
    [
      'docker executor beside run',
      '  - name: a\n    run: x\n    executor: {type: docker, config: {image: alpine}}\n',
      ["step 'a': field 'run': cannot be combined with 'executor'"],
    ],
    [
      'ssh executor',
      '  - name: a\n    command: x\n    executor: ssh\n',
      ["step 'a': field 'executor': executor type 'ssh' is not supported here"],
    ],
    [
      'config without executor',
      '  - name: a\n    run: x\n    config: {a: 1}\n',
      ["step 'a': field 'config': requires 'executor' or 'type'"],
    ],
    [
      'step type ssh',
      '  - name: a\n    run: x\n    type: ssh\n',
      ["step 'a': field 'type': step type 'ssh' is not supported here"],
    ],
    [
      'run and command',
      '  - name: a\n    run: x\n    command: y\n',
      ["step 'a': field 'command': cannot be combined with 'run'"],
    ],
    [
      'run and action',
      '  - name: a\n    run: x\n    action: dag.run\n    with: {dag: b}\n',
      ["step 'a': field 'run': cannot be combined with 'action'"],
    ],
    [
      'with without action',
      '  - name: a\n    run: x\n    with: {dag: b}\n',
      ["step 'a': field 'with': requires 'action'"],
    ],
    [
      'params without call',
      '  - name: a\n    run: echo hi\n    params: A=1\n',
      ["step 'a': field 'params': step params are only valid with call; use with.params"],
    ],
    [
      'unsupported action',
      '  - name: a\n    action: mail.send\n',
      ["step 'a': field 'action': action 'mail.send' is not supported here"],
    ],
    [
      'dag.run without dag',
      '  - name: a\n    action: dag.run\n',
      ["step 'a': field 'with.dag': sub-DAG name is required and must be a valid DAG name"],
    ],
    [
      'http without url',
      '  - name: a\n    action: http.request\n    with: {method: get}\n',
      ["step 'a': field 'with.url': url is required"],
    ],
    [
      'http bad method',
      '  - name: a\n    action: http.request\n    with: {method: FETCH, url: http://x}\n',
      ["step 'a': field 'with.method': must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS (value: FETCH)"],
    ],
    [
      'http unknown with key',
      '  - name: a\n    action: http.request\n    with: {url: http://x, quer: q}\n',
      ["step 'a': field 'with.quer': unknown field; did you mean 'query'?"],
    ],
    [
      'http form (dagu-actions §1.2) is refused by name',
      '  - name: a\n    action: http.request\n    with: {url: http://x, form: {a: b}}\n',
      ["step 'a': field 'with.form': multipart forms are not supported here"],
    ],
    [
      'http query that is not a map',
      '  - name: a\n    action: http.request\n    with: {url: http://x, query: q}\n',
      ["step 'a': field 'with.query': must be a map (value: q)"],
    ],
    [
      'human task without prompt',
      '  - id: a\n    action: human.task\n',
      ["step 'a': field 'with.prompt': human.task prompt is required"],
    ],
    [
      'human task without id',
      '  - name: a\n    action: human.task\n    with: {prompt: p}\n',
      ["step 'a': field 'id': human.task steps need an explicit id"],
    ],
    [
      'malformed id',
      '  - id: 1abc\n    run: x\n',
      [
        "step '1abc': field 'id': step id must match ^[A-Za-z][A-Za-z0-9_]*$ and be at most 40 characters (value: 1abc)",
      ],
    ],
    [
      'id too long',
      `  - id: a${'b'.repeat(40)}\n    run: x\n`,
      [
        `step 'a${'b'.repeat(40)}': field 'id': step id must match ^[A-Za-z][A-Za-z0-9_]*$ and be at most 40 characters (value: a${'b'.repeat(40)})`,
      ],
    ],
    [
      'reserved id',
      '  - id: Outputs\n    run: x\n',
      ["step 'Outputs': field 'id': step id 'Outputs' is reserved (value: Outputs)"],
    ],
    [
      'id equals another name',
      '  - name: b\n    run: x\n  - name: c\n    id: b\n    run: y\n',
      ["step 'c': field 'id': step id equals the name of another step (value: b)"],
    ],
    [
      'name too long',
      `  - name: ${'n'.repeat(256)}\n    run: x\n`,
      [`step '${'n'.repeat(256)}': field 'name': step name must be 1 to 255 characters (value: ${'n'.repeat(117)}...)`],
    ],
    [
      'missing dependency',
      '  - name: a\n    run: x\n    depends: [a, zz]\n',
      ['step a depends on non-existent step zz', 'dependency cycle detected: a -> a'],
    ],
    [
      'three-step cycle',
      '  - {name: a, run: x, depends: c}\n  - {name: b, run: x, depends: a}\n  - {name: c, run: x, depends: b}\n',
      ['dependency cycle detected: a -> c -> b -> a'],
    ],
    [
      'depends in chain',
      '  - {name: a, run: x}\n  - {name: b, run: x, depends: a}\n',
      ["step 'b': field 'depends': depends is not allowed in a chain DAG (value: [\"a\"])"],
    ],
    [
      'bad continue_on',
      '  - {name: a, run: x, continue_on: maybe}\n',
      ["step 'a': field 'continue_on': must be 'failed', 'skipped' or a map (value: maybe)"],
    ],
    [
      'bad retry limit',
      '  - {name: a, run: x, retry_policy: {limit: many}}\n',
      ["step 'a': field 'retry_policy.limit': must be a non-negative integer (value: many)"],
    ],
    [
      'repeat without mode',
      '  - {name: a, run: x, repeat_policy: {interval_sec: 1}}\n',
      ["step 'a': field 'repeat_policy': needs repeat, condition or exit_code (value: {\"interval_sec\":1})"],
    ],
    [
      'bad output name',
      '  - {name: a, run: x, output: "my-var"}\n',
      ["step 'a': field 'output': output name must be an identifier (value: my-var)"],
    ],
    [
      'bad output decode',
      '  - {name: a, run: x, output: {v: {decode: yaml}}}\n',
      ["step 'a': field 'output.v.decode': must be 'json' (value: yaml)"],
    ],
    [
      'rewind_to unknown',
      '  - {name: a, run: x, approval: {rewind_to: zz}}\n',
      ["step 'a': field 'approval.rewind_to': names no step of this DAG (value: zz)"],
    ],
    [
      'rewind_to not upstream',
      '  - {name: a, run: x}\n  - {name: b, run: x, depends: a, approval: {rewind_to: c}}\n  - {name: c, run: x}\n',
      [
        "step 'b': field 'approval.rewind_to': must be this step or a step it depends on, directly or transitively (value: c)",
      ],
    ],
    [
      'rewind_to downstream',
      '  - {name: a, run: x, approval: {rewind_to: b}}\n  - {name: b, run: x, depends: a}\n',
      [
        "step 'a': field 'approval.rewind_to': must be this step or a step it depends on, directly or transitively (value: b)",
      ],
    ],
    ['step not a map', '  - echo hi\n', ["field 'steps[0]': step must be a map (value: echo hi)"]],
  ])('%s', (label, steps, expected) => {
    expect(errorsOf(steps, label === 'depends in chain' ? 'type: chain\n' : '')).toEqual(expected);
  });
});

describe('foreach errors', () => {
  const body = '      steps:\n        - {id: w, run: echo}\n';
  it.each<[string, string, string[]]>([
    ['no steps', '      items: [a]\n', ["step 'l': field 'foreach.steps': foreach requires at least one step"]],
    [
      'no items',
      body,
      ["step 'l': field 'foreach.items': foreach items are required (a list or an expression string)"],
    ],
    [
      'too many items',
      `      items: [${Array.from({ length: 1001 }, (_, i) => i).join(',')}]\n${body}`,
      ["step 'l': field 'foreach.items': foreach supports at most 1000 items (value: 1001 items)"],
    ],
    [
      'duplicate scalar items',
      `      items: [a, b, a]\n${body}`,
      ["step 'l': field 'foreach.items': duplicate foreach item key (value: a)"],
    ],
    [
      'duplicate keys from template',
      `      items: [{id: 1}, {id: 1}]\n      key: "k-\${foreach.item.id}"\n${body}`,
      ["step 'l': field 'foreach.items': duplicate foreach item key (value: k-1)"],
    ],
    [
      'bad max_concurrent',
      `      items: [a]\n      max_concurrent: 0\n${body}`,
      ["step 'l': field 'foreach.max_concurrent': must be a positive integer (value: 0)"],
    ],
    [
      'unknown foreach key',
      `      items: [a]\n      parallel: 2\n${body}`,
      ["step 'l': field 'foreach.parallel': unknown field"],
    ],
    [
      'error inside the body',
      '      items: [a]\n      steps:\n        - {id: w}\n',
      ["step 'l': step 'w': field 'command': step command is required"],
    ],
    [
      'cycle inside the body',
      '      items: [a]\n      steps:\n        - {id: x, run: e, depends: y}\n        - {id: y, run: e, depends: x}\n',
      ["step 'l': dependency cycle detected: x -> y -> x"],
    ],
  ])('%s', (_label, foreach, expected) => {
    expect(errorsOf(`  - id: l\n    foreach:\n${foreach}`)).toEqual(expected);
  });

  it('accepts items from an expression, distinct keys and nested foreach', () => {
    const [loop] = stepsOf(
      '  - id: l\n    foreach:\n      items: "${steps.prev.output}"\n      steps:\n' +
        '        - id: inner\n          foreach:\n            items: [{id: 1}, {id: 2}]\n            key: "${foreach.item.id}"\n' +
        '            steps:\n              - {id: leaf, run: echo}\n',
    );
    expect(loop?.foreach?.items).toBe('${steps.prev.output}');
    expect(loop?.foreach?.steps[0]?.foreach).toMatchObject({
      items: [{ id: 1 }, { id: 2 }],
      key: '${foreach.item.id}',
      as: 'item',
    });
  });
});

describe('step normalization', () => {
  it.each<[string, string, Partial<NormalizedStep>]>([
    [
      'one-line run',
      '  - {name: a, run: echo hi}\n',
      { kind: 'command', commands: [{ kind: 'shell', line: 'echo hi' }] },
    ],
    [
      'multi-line run is a script',
      '  - name: a\n    run: |\n      echo 1\n      echo 2\n',
      { kind: 'script', script: 'echo 1\necho 2\n' },
    ],
    [
      'run list runs in sequence',
      '  - {name: a, run: ["echo 1", [echo, "2"]]}\n',
      {
        commands: [
          { kind: 'shell', line: 'echo 1' },
          { kind: 'exec', argv: ['echo', '2'] },
        ],
      },
    ],
    ['legacy command string', '  - {name: a, command: echo hi}\n', { commands: [{ kind: 'shell', line: 'echo hi' }] }],
    [
      'script with shell',
      '  - {name: a, script: "echo hi", shell: bash -e}\n',
      { kind: 'script', script: 'echo hi', shell: ['bash', '-e'] },
    ],
    ['name defaults to id', '  - {id: build, run: make}\n', { name: 'build', id: 'build' }],
    ['generated name', '  - {run: make}\n', { name: 'step_1' }],
    [
      'legacy call',
      '  - {name: a, call: child, params: "X=1"}\n',
      { kind: 'sub_dag', action: { type: 'dag.run', dag: 'child', params: 'X=1' } },
    ],
    [
      'dag.enqueue',
      '  - {name: a, action: dag.enqueue, with: {dag: c, params: {N: 2}}}\n',
      { action: { type: 'dag.enqueue', dag: 'c', params: { N: '2' } } },
    ],
    [
      'http body object',
      '  - {name: a, action: http.request, with: {method: post, url: "http://x", headers: {A: 1}, body: {k: v}, timeout_sec: 5}}\n',
      {
        kind: 'http',
        action: {
          type: 'http.request',
          method: 'POST',
          url: 'http://x',
          headers: { A: '1' },
          body: '{"k":"v"}',
          timeoutSec: 5,
        },
      },
    ],
    [
      'approval gate only',
      '  - {name: a, approval: {prompt: ok?, rewind_to: a}}\n',
      { kind: 'approval', approval: { prompt: 'ok?', input: [], required: [], rewindTo: 'a' } },
    ],
    [
      'continue_on string',
      '  - {name: a, run: x, continue_on: skipped}\n',
      { continueOn: { failure: false, skipped: true, exitCode: [], output: [], markSuccess: false } },
    ],
    [
      'continue_on legacy keys',
      '  - {name: a, run: x, continueOn: {exitCode: [1, 2], output: "re:warn", markSuccess: true}}\n',
      { continueOn: { failure: false, skipped: false, exitCode: [1, 2], output: ['re:warn'], markSuccess: true } },
    ],
    [
      'repeat until',
      '  - {name: a, run: x, repeat_policy: {condition: "$X", expected: done, interval_sec: 5}}\n',
      { repeatPolicy: { mode: 'until', condition: '$X', expected: 'done', intervalSec: 5, exitCodes: [] } },
    ],
    [
      'retry backoff true',
      '  - {name: a, run: x, retry_policy: {limit: "2", backoff: true, max_interval_sec: 60}}\n',
      { retryPolicy: { limit: 2, intervalSec: 0, backoff: 2, maxIntervalSec: 60, exitCodes: [] } },
    ],
    ['outputs list', '  - {id: a, run: x, outputs: [A, {name: B}]}\n', { outputs: ['A', 'B'] }],
    [
      'step env merges with defaults',
      '  - {name: a, run: x, env: {B: 2, A: 3}}\n',
      {
        env: [
          { key: 'A', value: '3' },
          { key: 'B', value: '2' },
        ],
      },
    ],
  ])('%s', (_label, steps, expected) => {
    const root = 'defaults:\n  env: {A: 1}\n';
    expect(stepsOf(steps, _label.includes('defaults') ? root : '')[0]).toMatchObject(expected);
  });

  it('inherits defaults unless the step sets its own', () => {
    const root =
      'working_dir: /srv\ndefaults:\n  timeout_sec: 30\n  continue_on: failed\n  shell: bash\n  retry_policy: {limit: 1}\n';
    const [inherit, own] = stepsOf(
      '  - {name: a, run: x}\n  - {name: b, run: x, timeout_sec: 5, working_dir: /tmp, retry_policy: {limit: 4}}\n',
      root,
    );
    expect(inherit).toMatchObject({
      timeoutSec: 30,
      workingDir: '/srv',
      shell: ['bash'],
      retryPolicy: { limit: 1 },
      continueOn: { failure: true },
    });
    expect(own).toMatchObject({
      timeoutSec: 5,
      workingDir: '/tmp',
      retryPolicy: { limit: 4 },
      continueOn: { failure: true },
    });
  });

  it('approval.rewind_to: a transitive upstream step, given by id, resolves to its name', () => {
    const steps = stepsOf(
      '  - {name: Build it, id: build, run: make}\n  - {name: test, run: x, depends: build}\n  - {name: gate, run: x, depends: test, approval: {rewind_to: build}}\n',
    );
    expect(steps[2]?.approval).toMatchObject({ rewindTo: 'Build it' });
    expect(
      stepsOf(
        '  - {name: a, run: x}\n  - {name: b, run: x}\n  - {name: g, run: x, approval: {rewind_to: b}}\n',
        'type: chain\n',
      )[2]?.approval?.rewindTo,
    ).toBe('b');
  });

  it('resolves depends given by id to step names', () => {
    const steps = stepsOf('  - {name: Build it, id: build, run: make}\n  - {name: test, run: x, depends: build}\n');
    expect(steps[1]?.depends).toEqual(['Build it']);
  });
});
