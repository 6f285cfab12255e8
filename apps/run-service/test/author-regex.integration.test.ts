import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * DAG authors' regular expressions against the real engine (issue 17 "Every
 * unbounded thing gets a bound": `re:` in preconditions and
 * `continue_on.output`). The engine runs in this process, so a pattern that
 * backtracks exponentially on a long line would stall it, and this test with
 * it; RE2 semantics (linear time) keep it to the line's length.
 */
let env: RunTestEnv;
const LONG = `${'a'.repeat(5000)}b`;

beforeAll(async () => {
  env = await createRunTestEnv('regex');
});
afterAll(async () => {
  await env.close();
});

describe("authors' regular expressions run in linear time", () => {
  it('a catastrophic pattern in a precondition and in continue_on.output is evaluated, not stalled on', async () => {
    const id = await env.start(
      'redos',
      `steps:
  - name: gated
    run: echo gated
    preconditions: [{condition: "${LONG}", expected: "re:^(a+)+$"}]
  - name: tolerated
    run: "echo ${LONG}; exit 1"
    continue_on: {output: ["re:^(a+)+$", "re:(a|aa)+b$"]}
  - {name: after, run: echo after, depends: [tolerated]}
`,
    );
    const detail = await env.waitForEnd('redos', id);
    expect(stepOf(detail, 'gated').status).toBe(5); // skipped: the line does not match
    expect(stepOf(detail, 'tolerated').status).toBe(2); // failed, and tolerated: the second pattern matches
    expect(stepOf(detail, 'after').status).toBe(4);
    expect(detail.statusLabel).toBe('partially_succeeded');
  });

  it('a pattern RE2 does not support (lookahead) is an evaluation error of the precondition', async () => {
    const id = await env.start(
      'lookahead',
      'steps:\n  - name: gated\n    run: echo gated\n    preconditions: [{condition: "abc", expected: "re:a(?=b)"}]\n',
    );
    const detail = await env.waitForEnd('lookahead', id);
    expect(stepOf(detail, 'gated').status).not.toBe(4);
    expect(JSON.stringify(detail)).toContain('invalid regular expression in expected');
  });
});
