/**
 * Root-level rules of parseDagSpec (dagu-model.md §2–4): YAML stream, names,
 * root keys, schedule, env, labels, handlers, sub-DAG documents.
 */
import { DEFAULT_EXPANSION_LIMITS, parseDagSpec } from './index';
import { aliasBombSpec } from '../test-fixtures/alias-bomb';
import { manyKeysSpec, NESTING_ATTACK_ERROR, nestingAttackSpec } from '../test-fixtures/nesting-attack';

const STEP = 'steps:\n  - name: a\n    run: echo a\n';

function errorsOf(yaml: string, opts: { name?: string } = { name: 'test-dag' }): string[] {
  return parseDagSpec(yaml, opts).errors;
}

describe('parseDagSpec: invalid root documents', () => {
  it.each<[string, string, string[]]>([
    ['empty stream', '', ['DAG spec is empty']],
    ['scalar document', 'hello', ['DAG spec must be a YAML mapping']],
    ['duplicate YAML keys', `name: a\nname: b\n${STEP}`, ['invalid YAML: Map keys must be unique at line 2, column 1']],
    ['no steps', 'description: x\n', ["field 'steps': at least one step is required"]],
    [
      'steps is a scalar',
      'steps: hello\n',
      ["field 'steps': must be a list of steps or a map of step names to steps (value: hello)"],
    ],
    ['unknown root key', `foo: 1\n${STEP}`, ["field 'foo': unknown field"]],
    ['unsupported root key', `ssh: {user: a}\n${STEP}`, ["field 'ssh': ssh is not supported here"]],
    [
      'both spellings of a key',
      `handlerOn: {}\nhandler_on: {}\n${STEP}`,
      ["field 'handler_on': duplicates 'handler_on'"],
    ],
    ['bad type', `type: dag\n${STEP}`, ["field 'type': must be 'graph' or 'chain' (value: dag)"]],
    [
      'bad cron value',
      `schedule: "61 * * * *"\n${STEP}`,
      ["field 'schedule': invalid cron expression: CronPattern: Invalid value for minute: 61 (value: 61 * * * *)"],
    ],
    [
      '6-field cron',
      `schedule: ["0 0 * * * *"]\n${STEP}`,
      ["field 'schedule': cron expression must have exactly 5 fields (value: 0 0 * * * *)"],
    ],
    [
      'stop schedule',
      `schedule: {start: "0 1 * * *", stop: "0 2 * * *"}\n${STEP}`,
      ["field 'schedule.stop': stop schedules are not supported here"],
    ],
    ['env item without =', `env: [FOO]\n${STEP}`, ["field 'env[0]': must be KEY=value (value: FOO)"]],
    ['env bad key', `env: {"1X": a}\n${STEP}`, ["field 'env.1X': invalid environment variable name (value: 1X)"]],
    [
      'negative timeout',
      `timeout_sec: -1\n${STEP}`,
      ["field 'timeout_sec': must be a non-negative integer (value: -1)"],
    ],
    [
      'unknown defaults key',
      `defaults: {preconditions: x}\n${STEP}`,
      ["field 'defaults.preconditions': unknown field"],
    ],
    [
      'handler with depends',
      `handler_on:\n  exit: {run: x, depends: a}\n${STEP}`,
      ['handler_on.exit: field \'depends\': handlers cannot have depends (value: ["a"])'],
    ],
    ['unknown handler', `handler_on:\n  start: {run: x}\n${STEP}`, ["field 'handler_on.start': unknown field"]],
    [
      'human task in handler',
      `handler_on:\n  exit: {id: h, action: human.task, with: {prompt: p}}\n${STEP}`,
      ["handler_on.exit: field 'action': human.task is not allowed in handler_on (value: human.task)"],
    ],
    [
      'approval in handler',
      `handler_on:\n  exit: {run: x, approval: {prompt: ok?}}\n${STEP}`,
      ["handler_on.exit: field 'approval': an approval gate is not allowed in handler_on (value: approval)"],
    ],
    [
      'approval in foreach',
      `steps:\n  - name: loop\n    foreach: {items: [a], steps: [{name: gate, run: x, approval: {}}]}\n`,
      ["step 'loop': step 'gate': field 'approval': an approval gate is not allowed inside foreach (value: approval)"],
    ],
  ])('%s', (_label, yaml, expected) => {
    expect(errorsOf(yaml)).toEqual(expected);
  });
});

describe('parseDagSpec: names', () => {
  it.each<[string, string, string | undefined, string[]]>([
    ['no name anywhere', STEP, undefined, ["field 'name': DAG name is required"]],
    [
      'bad tool name',
      STEP,
      'a b',
      ["field 'name': DAG name must match ^[a-zA-Z0-9_.-]+$ and not be . or .. (value: a b)"],
    ],
    ['dot name', STEP, '..', ["field 'name': DAG name must match ^[a-zA-Z0-9_.-]+$ and not be . or .. (value: ..)"]],
    [
      '41 chars',
      STEP,
      'x'.repeat(41),
      [`field 'name': DAG name must be at most 40 characters (value: ${'x'.repeat(41)})`],
    ],
    [
      'bad YAML name without tool name',
      `name: "a/b"\n${STEP}`,
      undefined,
      ["field 'name': DAG name must match ^[a-zA-Z0-9_.-]+$ and not be . or .. (value: a/b)"],
    ],
  ])('%s', (_label, yaml, name, expected) => {
    expect(errorsOf(yaml, name === undefined ? {} : { name })).toEqual(expected);
  });

  it('the tool name wins and the YAML name is kept as yamlName', () => {
    const result = parseDagSpec(`name: other\n${STEP}`, { name: 'mine' });
    expect(result.dag).toMatchObject({ name: 'mine', yamlName: 'other' });
    expect(parseDagSpec(`name: same\n${STEP}`, { name: 'same' }).dag?.yamlName).toBeUndefined();
    expect(parseDagSpec(`name: fromyaml\n${STEP}`).dag?.name).toBe('fromyaml');
  });
});

describe('parseDagSpec: sub-DAG documents', () => {
  it.each<[string, string, string[]]>([
    ['no name', `${STEP}---\n${STEP}`, ["document 2: field 'name': a sub-DAG document must have a name"]],
    ['not a map', `${STEP}---\n- a\n`, ['document 2: a sub-DAG document must be a YAML mapping']],
    [
      'duplicate names',
      `${STEP}---\nname: c\n${STEP}---\nname: c\n${STEP}`,
      ["sub-DAG 'c': field 'name': duplicate DAG name in this file (value: c)"],
    ],
    [
      'errors inside',
      `${STEP}---\nname: c\nsteps:\n  - name: x\n`,
      ["sub-DAG 'c': step 'x': field 'command': step command is required"],
    ],
  ])('%s', (_label, yaml, expected) => {
    expect(errorsOf(yaml)).toEqual(expected);
  });

  it('ignores empty trailing documents and returns sub-DAGs in order', () => {
    const result = parseDagSpec(`${STEP}---\nname: c1\n${STEP}---\nname: c2\n${STEP}---\n`, { name: 'p' });
    expect(result.subDags.map((d) => d.name)).toEqual(['c1', 'c2']);
  });
});

describe('parseDagSpec: root normalization', () => {
  it.each<[string, string, Record<string, unknown>]>([
    [
      'defaults',
      STEP,
      {
        type: 'graph',
        maxActiveRuns: 1,
        maxActiveSteps: 0,
        params: [],
        env: [],
        labels: [],
        schedule: [],
        handlerOn: {},
      },
    ],
    [
      'camelCase root keys',
      `maxActiveRuns: 3\nmaxActiveSteps: 2\ntimeoutSec: 60\nhistRetentionDays: 5\nworkingDir: /tmp\n${STEP}`,
      { maxActiveRuns: 3, maxActiveSteps: 2, timeoutSec: 60, histRetentionDays: 5, workingDir: '/tmp' },
    ],
    [
      'env map',
      `env:\n  A: 1\n  B: x\n${STEP}`,
      {
        env: [
          { key: 'A', value: '1' },
          { key: 'B', value: 'x' },
        ],
      },
    ],
    [
      'env KEY=value list',
      `env: ["A=1", "B=x=y"]\n${STEP}`,
      {
        env: [
          { key: 'A', value: '1' },
          { key: 'B', value: 'x=y' },
        ],
      },
    ],
    ['labels string', `labels: "a, b,,c"\n${STEP}`, { labels: ['a', 'b', 'c'] }],
    [
      'labels map and tags list merged',
      `labels: {team: ops}\ntags: [x, team=ops]\n${STEP}`,
      { labels: ['team=ops', 'x'] },
    ],
    [
      'schedule list with CRON_TZ',
      `schedule: ["CRON_TZ=Europe/Paris 0 9 * * 1-5", "*/5 * * * *"]\n${STEP}`,
      { schedule: ['CRON_TZ=Europe/Paris 0 9 * * 1-5', '*/5 * * * *'] },
    ],
    ['queue', `queue: heavy\n${STEP}`, { queue: 'heavy' }],
    [
      'preconditions list',
      `preconditions:\n  - condition: "\`date +%u\`"\n    expected: "re:[1-5]"\n${STEP}`,
      { preconditions: [{ condition: '`date +%u`', expected: 're:[1-5]' }] },
    ],
    [
      'cancel handler is abort',
      `handler_on:\n  cancel: {run: echo c}\n${STEP}`,
      { handlerOn: { abort: expect.objectContaining({ name: 'onAbort' }) } },
    ],
  ])('%s', (_label, yaml, expected) => {
    const result = parseDagSpec(yaml, { name: 't' });
    expect(result.errors).toEqual([]);
    expect(result.dag).toMatchObject(expected);
  });

  it('never throws on odd input', () => {
    for (const yaml of [
      '[1, 2]',
      '~',
      'steps: [null, 1, "x"]',
      '&a [*a]',
      'a: !!binary zz',
      'steps:\n  - {run: [[]]}',
    ]) {
      const result = parseDagSpec(yaml, { name: 't' });
      expect(result.valid).toBe(false);
      expect(result.errors.length).toBeGreaterThan(0);
    }
  });
});

describe('parseDagSpec: the expanded size of aliases is bounded', () => {
  const bounded = (message: string): string => `invalid YAML: aliases expand the document to more than ${message}`;

  it('refuses a 23 KB spec whose aliases expand to ten million values', () => {
    const spec = aliasBombSpec();
    expect(spec.length).toBeLessThan(25_000);
    expect(parseDagSpec(spec, { name: 'bomb' })).toEqual({
      valid: false,
      errors: [bounded(`${DEFAULT_EXPANSION_LIMITS.maxNodes} values (the expanded size is bounded)`)],
      warnings: [],
      subDags: [],
    });
  });

  it('refuses nested anchors that expand exponentially', () => {
    let spec = 'x0: &a0 [lol]\n';
    for (let i = 1; i <= 30; i += 1) spec += `x${i}: &a${i} [*a${i - 1}, *a${i - 1}]\n`;
    expect(errorsOf(`${spec}${STEP}`)).toEqual([
      bounded(`${DEFAULT_EXPANSION_LIMITS.maxNodes} values (the expanded size is bounded)`),
    ]);
  });

  it('refuses aliases that multiply one long string past the text bound', () => {
    const spec = aliasBombSpec(1, 50).replace('[a]', `["${'x'.repeat(10_000)}"]`);
    expect(
      parseDagSpec(spec, { name: 'bomb', expansionLimits: { maxNodes: 1_000, maxChars: 100_000 } }).errors,
    ).toEqual([bounded('100000 characters of text (the expanded size is bounded)')]);
  });

  it('refuses an alias inside its own anchor', () => {
    expect(errorsOf(`env: &e [*e]\n${STEP}`)).toEqual(['invalid YAML: an alias refers to a node that contains it']);
  });

  it('keeps a spec whose aliases stay inside the bounds', () => {
    expect(parseDagSpec(aliasBombSpec(100, 10), { name: 'small' })).toMatchObject({ valid: true, errors: [] });
  });
});

describe('parseDagSpec: the text is bounded before it is parsed', () => {
  it.each([200_000, 500_000])('refuses `steps: ` and %i nested brackets without parsing them', (levels) => {
    expect(parseDagSpec(nestingAttackSpec(levels), { name: 'attack' })).toEqual({
      valid: false,
      errors: [NESTING_ATTACK_ERROR],
      warnings: [],
      subDags: [],
    });
  });

  it('refuses nesting past the bound in block style', () => {
    const spec = Array.from({ length: 70 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    expect(errorsOf(spec)).toEqual([
      'invalid YAML: collections nest deeper than 64 levels at line 65, column 65 (the nesting depth is bounded)',
    ]);
  });

  it('takes the bounds of the caller', () => {
    expect(parseDagSpec(STEP, { name: 'a', textBounds: { maxBytes: 10, maxDepth: 64, maxNodes: 100 } }).errors).toEqual(
      ['invalid YAML: the text is larger than 10 bytes (its size is bounded)'],
    );
  });

  it('finds a repeated key in time linear in the keys (the library compares each key with every other)', () => {
    // A complexity check, not a speed claim: four times the keys must cost about four times
    // the time, not sixteen (the library's own check: 50 000 keys took 48 s).
    const timed = (keys: number): number => {
      const started = performance.now();
      expect(errorsOf(manyKeysSpec(keys))).toEqual([
        `invalid YAML: Map keys must be unique at line ${keys + 5}, column 3`,
      ]);
      return performance.now() - started;
    };
    timed(2_000);
    const small = Math.min(timed(10_000), timed(10_000));
    const large = timed(40_000);
    expect(large / small).toBeLessThan(9);
  });
});
