import { DaguError } from '@dagu-mcp/contracts';
import { parseExecuteInput, sortKeys, type ExecuteErrorContext } from './execute-input';

const SPEC = 'steps:\n  - name: hello\n    run: echo hello\n';

function failure(args: unknown): { error: DaguError; context: ExecuteErrorContext } {
  const context: ExecuteErrorContext = {};
  try {
    parseExecuteInput(args, context);
  } catch (err) {
    if (err instanceof DaguError) return { error: err, context };
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(args)} to fail`);
}

describe('parseExecuteInput: the 036 §Examples', () => {
  test('start with params object, wait and waitTimeoutSeconds', () => {
    const request = parseExecuteInput(
      { action: 'start', name: 'nightly-report', params: { TARGET: 'orders' }, wait: true, waitTimeoutSeconds: 30 },
      {},
    );
    expect(request).toEqual({
      action: 'start',
      targetType: 'dag',
      name: 'nightly-report',
      params: '{"TARGET":"orders"}',
      wait: true,
      waitTimeoutSeconds: 30,
    });
  });

  test('retry from a step with its downstream steps (targetType defaults to run)', () => {
    const request = parseExecuteInput(
      {
        action: 'retry',
        name: 'nightly-report',
        dagRunId: '20260701T010000Z',
        stepName: 'load',
        includeDownstream: true,
      },
      {},
    );
    expect(request).toEqual({
      action: 'retry',
      targetType: 'run',
      name: 'nightly-report',
      dagRunId: '20260701T010000Z',
      stepName: 'load',
      includeDownstream: true,
      wait: false,
    });
  });

  test('stop of a run', () => {
    expect(parseExecuteInput({ action: 'stop', name: 'nightly-report', dagRunId: '20260701T010000Z' }, {})).toEqual({
      action: 'stop',
      targetType: 'run',
      name: 'nightly-report',
      dagRunId: '20260701T010000Z',
      wait: false,
    });
  });

  test.each([
    [{ action: 'restart', name: 'x' }, 'action'],
    [{ action: 'start', name: 'x', force: true }, 'force'],
    [{ action: 'retry', name: 'x' }, 'dagRunId'],
    [{ action: 'start', name: 'x', waitTimeoutSeconds: 5 }, 'waitTimeoutSeconds'],
  ])('%j → invalid_tool_input on %s', (args, field) => {
    const { error } = failure(args);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe(field);
  });
});

describe('parseExecuteInput: 036 §Input parsing rules', () => {
  test('arguments must be an object (no field)', () => {
    for (const args of [['start'], 'start', 7, null]) {
      const { error } = failure(args);
      expect(error.code).toBe('invalid_tool_input');
      expect(error.field).toBeUndefined();
    }
  });

  test('null counts as absent; strings but spec are trimmed; empty counts as absent', () => {
    const request = parseExecuteInput(
      {
        action: ' enqueue ',
        name: ' n ',
        spec: `  ${SPEC}`,
        queue: ' q1 ',
        dagRunId: '  ',
        params: ' A=1 B=2 ',
        labels: [' team=ops ', 'urgent'],
        wait: null,
      },
      {},
    );
    expect(request).toEqual({
      action: 'enqueue',
      targetType: 'inline_spec',
      name: 'n',
      spec: `  ${SPEC}`,
      queue: 'q1',
      params: 'A=1 B=2',
      labels: ['team=ops', 'urgent'],
      wait: false,
    });
  });

  test('an object params is compact JSON with keys sorted at every depth; {} is absent', () => {
    const request = parseExecuteInput(
      { action: 'start', name: 'n', params: { b: { z: 1, a: [{ d: 1, c: 2 }] }, a: 'x' } },
      {},
    );
    expect(request.params).toBe('{"a":"x","b":{"a":[{"c":2,"d":1}],"z":1}}');
    expect(parseExecuteInput({ action: 'start', name: 'n', params: {} }, {}).params).toBeUndefined();
    expect(sortKeys([{ b: 1, a: 2 }])).toEqual([{ a: 2, b: 1 }]);
  });

  test('wait=true defaults waitTimeoutSeconds to 60', () => {
    expect(parseExecuteInput({ action: 'start', name: 'n', wait: true }, {}).waitTimeoutSeconds).toBe(60);
  });

  test('several unknown keys: the alphabetically first is reported', () => {
    expect(failure({ action: 'start', name: 'x', zeta: 1, alpha: 2 }).error.field).toBe('alpha');
  });

  test.each([
    [{ action: 1, name: 'x' }, 'action'],
    [{ action: 'start', name: 'x', targetType: true }, 'targetType'],
    [{ action: 'start', name: ['x'] }, 'name'],
    [{ action: 'start', name: 'x', spec: { steps: [] } }, 'spec'],
    [{ action: 'start', name: 'x', dagRunId: 7 }, 'dagRunId'],
    [{ action: 'start', name: 'x', params: ['A=1'] }, 'params'],
    [{ action: 'start', name: 'x', params: 5 }, 'params'],
    [{ action: 'enqueue', name: 'x', queue: 1 }, 'queue'],
    [{ action: 'start', name: 'x', singleton: 'yes' }, 'singleton'],
    [{ action: 'start', name: 'x', noReuse: 1 }, 'noReuse'],
    [{ action: 'start', name: 'x', labels: 'a=b' }, 'labels'],
    [{ action: 'start', name: 'x', labels: ['a', 3] }, 'labels'],
    [{ action: 'start', name: 'x', labels: ['  '] }, 'labels'],
    [{ action: 'start', name: 'x', labels: ['=v'] }, 'labels'],
    [{ action: 'retry', name: 'x', dagRunId: 'r', stepName: 3 }, 'stepName'],
    [{ action: 'retry', name: 'x', dagRunId: 'r', includeDownstream: 'true' }, 'includeDownstream'],
    [{ action: 'start', name: 'x', wait: 'true' }, 'wait'],
    [{ action: 'start', name: 'x', wait: true, waitTimeoutSeconds: 1.5 }, 'waitTimeoutSeconds'],
    [{ action: 'start', name: 'x', wait: true, waitTimeoutSeconds: '30' }, 'waitTimeoutSeconds'],
  ])('wrong JSON type %j fails on %s', (args, field) => {
    const { error } = failure(args);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe(field);
  });
});

describe('parseExecuteInput: 036 validation order (first failure wins)', () => {
  test.each([
    // 1. action missing or not in the enum
    ['1', { name: 'x' }, 'action'],
    ['1', { action: '  ', name: 'x' }, 'action'],
    ['1 before 5', { action: 'Start' }, 'action'],
    // 2. unknown targetType (after the default)
    ['2', { action: 'start', name: 'x', targetType: 'workflow' }, 'targetType'],
    ['2 before 5', { action: 'stop', targetType: 'job' }, 'targetType'],
    // 3. start/enqueue target rules
    ['3 dag with spec', { action: 'start', name: 'x', targetType: 'dag', spec: SPEC }, 'spec'],
    ['3 blank spec defaults to dag', { action: 'start', name: 'x', spec: ' \n ' }, 'spec'],
    ['3 inline_spec without spec', { action: 'enqueue', name: 'x', targetType: 'inline_spec' }, 'spec'],
    [
      '3 inline_spec with a blank spec',
      { action: 'start', name: 'x', targetType: 'inline_spec', spec: ' \t\n' },
      'spec',
    ],
    ['3 run', { action: 'start', name: 'x', targetType: 'run' }, 'targetType'],
    ['3 before 5', { action: 'enqueue', targetType: 'run' }, 'targetType'],
    // 4. retry/stop need targetType run
    ['4', { action: 'retry', name: 'x', dagRunId: 'r', targetType: 'dag' }, 'targetType'],
    [
      '4 with a spec',
      { action: 'stop', name: 'x', dagRunId: 'r', targetType: 'inline_spec', spec: SPEC },
      'targetType',
    ],
    // 5. name
    ['5 missing', { action: 'start' }, 'name'],
    ['5 blank', { action: 'start', name: '   ' }, 'name'],
    ['5 malformed', { action: 'start', name: 'bad name' }, 'name'],
    ['5 before 6', { action: 'start', queue: 'q' }, 'name'],
    // 6. queue on a non-enqueue action
    ['6 start', { action: 'start', name: 'x', queue: 'q' }, 'queue'],
    ['6 retry', { action: 'retry', name: 'x', queue: 'q', spec: SPEC }, 'queue'],
    // 7. retry/stop with start-only fields, in field order
    ['7 spec', { action: 'retry', name: 'x', dagRunId: 'r', spec: SPEC }, 'spec'],
    ['7 params', { action: 'stop', name: 'x', dagRunId: 'r', params: 'A=1' }, 'params'],
    ['7 params object', { action: 'stop', name: 'x', dagRunId: 'r', params: { A: 1 } }, 'params'],
    ['7 singleton false', { action: 'retry', name: 'x', dagRunId: 'r', singleton: false }, 'singleton'],
    ['7 noReuse', { action: 'stop', name: 'x', dagRunId: 'r', noReuse: true }, 'noReuse'],
    ['7 labels', { action: 'retry', name: 'x', dagRunId: 'r', labels: ['a'] }, 'labels'],
    ['7 spec before params', { action: 'retry', name: 'x', params: 'A=1', spec: SPEC }, 'spec'],
    ['7 before 9', { action: 'stop', name: 'x', labels: ['a'] }, 'labels'],
    // 8. non-retry with retry-only fields
    ['8 stepName on start', { action: 'start', name: 'x', stepName: 's' }, 'stepName'],
    ['8 stepName on stop', { action: 'stop', name: 'x', dagRunId: 'r', stepName: 's' }, 'stepName'],
    ['8 includeDownstream on enqueue', { action: 'enqueue', name: 'x', includeDownstream: true }, 'includeDownstream'],
    ['8 before 9', { action: 'stop', name: 'x', stepName: 's' }, 'stepName'],
    // 9. run id required for retry/stop, and well-formed
    ['9 retry', { action: 'retry', name: 'x' }, 'dagRunId'],
    ['9 stop', { action: 'stop', name: 'x', dagRunId: '  ' }, 'dagRunId'],
    ['9 malformed', { action: 'stop', name: 'x', dagRunId: 'a/b' }, 'dagRunId'],
    ['9 too long', { action: 'start', name: 'x', dagRunId: 'r'.repeat(65) }, 'dagRunId'],
    ['9 before 10', { action: 'retry', name: 'x', includeDownstream: true }, 'dagRunId'],
    // 10. includeDownstream without stepName
    ['10', { action: 'retry', name: 'x', dagRunId: 'r', includeDownstream: true }, 'stepName'],
    [
      '10 before 11',
      { action: 'retry', name: 'x', dagRunId: 'r', includeDownstream: true, waitTimeoutSeconds: 9 },
      'stepName',
    ],
    // 11. waitTimeoutSeconds
    ['11 without wait', { action: 'start', name: 'x', waitTimeoutSeconds: 5 }, 'waitTimeoutSeconds'],
    [
      '11 wait=false',
      { action: 'stop', name: 'x', dagRunId: 'r', wait: false, waitTimeoutSeconds: 5 },
      'waitTimeoutSeconds',
    ],
    ['11 zero', { action: 'start', name: 'x', wait: true, waitTimeoutSeconds: 0 }, 'waitTimeoutSeconds'],
    ['11 above 300', { action: 'start', name: 'x', wait: true, waitTimeoutSeconds: 301 }, 'waitTimeoutSeconds'],
  ])('step %s: %j → field %s', (_step, args, field) => {
    const { error } = failure(args);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe(field);
  });

  test.each([
    [{ action: 'start', name: 'x', wait: true, waitTimeoutSeconds: 1 }],
    [{ action: 'start', name: 'x', wait: true, waitTimeoutSeconds: 300 }],
    [{ action: 'start', name: 'x', noReuse: false, includeDownstream: false }],
    [{ action: 'retry', name: 'x', dagRunId: 'r', noReuse: false }],
    [{ action: 'retry', name: 'x', dagRunId: 'r', params: {}, labels: [] }],
    [{ action: 'start', name: 'x', dagRunId: 'r'.repeat(64), singleton: true, noReuse: true, labels: ['k'] }],
    [{ action: 'start', name: 'x', spec: '' }],
  ])('accepted: %j', (args) => {
    expect(() => parseExecuteInput(args, {})).not.toThrow();
  });
});

describe('parseExecuteInput: the error context (036 §Errors optional keys)', () => {
  test('carries what was resolved before the failure', () => {
    expect(failure({ action: 'restart', name: 'x' }).context).toEqual({});
    expect(failure({ action: 'retry', name: 'nightly' }).context).toEqual({
      action: 'retry',
      targetType: 'run',
      dagName: 'nightly',
    });
    expect(failure({ action: 'start', name: 'n', dagRunId: 'r1', wait: true, waitTimeoutSeconds: 0 }).context).toEqual({
      action: 'start',
      targetType: 'dag',
      dagName: 'n',
      dagRunId: 'r1',
    });
  });
});

describe('parseExecuteInput: dagRunId "latest"', () => {
  it('is refused as the id of a new run, on dagRunId', () => {
    for (const action of ['start', 'enqueue']) {
      const { error } = failure({ action, name: 'etl', dagRunId: 'latest' });
      expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'dagRunId' });
    }
  });

  it('names the latest run for retry and stop', () => {
    expect(parseExecuteInput({ action: 'stop', name: 'etl', dagRunId: 'latest' }, {})).toMatchObject({
      dagRunId: 'latest',
    });
  });
});
