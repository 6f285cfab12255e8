/**
 * DAG YAML from a grammar-based generator (issue 18 "property tests at
 * scale"): documents shaped like dagu-model §3–4 DAGs — steps with names,
 * `run` / `script` / `command` / `action` bodies, `depends` on earlier,
 * later, unknown or their own names (so cycles and dangling references
 * occur), params, env, schedules, handlers, retry and continue policies —
 * with a few keys and values off the grammar mixed in. For each:
 *
 * - validation never crashes: dag-service's `validateDagChange` returns a
 *   result (never throws for a valid name) and no error is the catch-all
 *   "invalid DAG spec:" of an internal exception;
 * - dag-service and run-service agree: a spec dag-service stores as valid is
 *   one run-service's start accepts (`parseDagSpec` on the stored bytes, as
 *   `startRun` and the engine's `dagOfSnapshot` do) and its engine can build
 *   the nodes of (`nodesOfDag`, every
 *   step kind known), and an invalid one is refused by both with the same errors.
 *
 * Cases: `PROPERTY_RUNS` (10,000 in the fault suite), else 200.
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { validateDagChange } from '../../apps/dag-service/src/dags/dag-validation';
import { nodesOfDag } from '../../apps/run-service/src/core/dag-nodes';
import { isStepKind } from '../../apps/run-service/src/core/step-kinds';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

/** Mostly `valid`, sometimes `invalid`: enough valid documents reach the engine side. */
function mostly<T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> {
  return fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: invalid });
}

const stepName = mostly(
  fc.stringMatching(/^[a-z][a-z0-9_-]{0,12}$/),
  fc.constantFrom('env', 'params', 'output', 'a b', '', 'x'.repeat(60)),
);
const shell = mostly(
  fc.constantFrom('echo hi', 'true', 'sleep 0', 'echo ${PARAM}', 'exit 1', 'printf "%s" "$X"'),
  fc.string({ maxLength: 30 }),
);
const body = fc.oneof(
  { weight: 12, arbitrary: shell.map((run) => ({ run })) },
  { weight: 1, arbitrary: shell.map((command) => ({ command })) },
  { weight: 1, arbitrary: fc.array(shell, { minLength: 1, maxLength: 3 }).map((l) => ({ script: l.join('\n') })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { action: 'http.request', with: { url: 'http://127.0.0.1:1/x', method: 'GET' } },
      { action: 'approval', with: { prompt: 'ok?' } },
      { action: 'dag.run', with: { dag: 'child' } },
      { action: 'no.such.action' },
      { type: 'http' },
    ),
  },
);
const policy = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.record({ retry_policy: fc.record({ limit: fc.integer({ min: -1, max: 5 }) }) }) },
  { weight: 1, arbitrary: fc.record({ continue_on: fc.record({ failure: fc.boolean() }) }) },
  { weight: 1, arbitrary: fc.record({ output: mostly(fc.constant('OUT'), fc.constantFrom('lower', '1BAD')) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      env: fc.dictionary(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,6}$/), fc.string({ maxLength: 10 }), { maxKeys: 3 }),
    }),
  },
);
/** Top-level keys, each present or not. */
const top = fc.record(
  {
    params: mostly(fc.constant('A=1 B=two'), fc.array(fc.constantFrom('X=1', 'Y', '=bad'), { maxLength: 3 })),
    schedule: mostly(
      fc.constantFrom('0 * * * *', '*/5 * * * *', ['0 1 * * *', '0 2 * * *']),
      fc.constant('not a cron'),
    ),
    description: fc.string({ maxLength: 20 }),
    labels: fc.array(fc.constantFrom('workspace=ops', 'team', 'a=b'), { maxLength: 2 }),
    handler_on: fc.record(
      { failure: fc.record({ run: shell }), exit: fc.record({ run: shell }) },
      { requiredKeys: [] },
    ),
    max_active_runs: mostly(fc.integer({ min: 1, max: 3 }), fc.constant(-1)),
    type: mostly(fc.constantFrom('graph', 'chain'), fc.constant('agent')),
  },
  { requiredKeys: [] },
);
/** Off the grammar, now and then: an unknown key, or a known key with any JSON value. */
const offGrammar = mostly(
  fc.constant({}),
  fc.dictionary(fc.constantFrom('steps', 'name', 'unknown_key', 'env'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 1 }),
);

/** A DAG document: steps whose `depends` name earlier steps mostly, later, unknown or their own sometimes. */
const dagDocument = fc
  .record({
    names: fc.uniqueArray(stepName, { minLength: 1, maxLength: 7 }),
    bodies: fc.array(body, { minLength: 7, maxLength: 7 }),
    policies: fc.array(policy, { minLength: 7, maxLength: 7 }),
    deps: fc.array(fc.array(mostly(fc.nat(6), fc.integer({ min: -1, max: 7 })), { maxLength: 2 }), {
      minLength: 7,
      maxLength: 7,
    }),
    back: fc.boolean(),
    top,
    offGrammar,
  })
  .map(({ names, bodies, policies, deps, back, top, offGrammar }) => {
    const steps = names.map((name, i) => {
      // Mostly an earlier step (a DAG), else any index: later ones, itself (cycles) and dangling names.
      const named = (deps[i] ?? []).map((d) => (d < 0 ? 'missing-step' : names[back && i > 0 ? d % i : d]));
      const depends = named.filter((d) => d !== undefined && (back ? d !== name : true));
      return { name, ...bodies[i], ...policies[i], ...(depends.length > 0 ? { depends } : {}) };
    });
    return stringify({ ...top, steps, ...offGrammar });
  });

describe('DAG YAML from the grammar (dag-service and run-service agree, nothing crashes)', () => {
  it('validates the same in dag-service and run-service and never crashes either', () => {
    fc.assert(
      fc.property(dagDocument, (spec) => {
        const stored = validateDagChange('gen-dag', spec);
        for (const error of stored.validation.errors) expect(error).not.toMatch(/^invalid DAG spec:/);
        // run-service's start parses the bytes dag-service stored; its engine runs that snapshot.
        const started = parseDagSpec(stored.write?.spec ?? spec, { name: 'gen-dag' });
        expect(started.valid).toBe(stored.validation.valid);
        expect(started.errors).toEqual(stored.validation.errors);
        if (started.dag === undefined) return;
        const nodes = nodesOfDag(started.dag);
        const dag = started.dag;
        expect(nodes.steps.length).toBe(dag.steps.length);
        for (const node of nodes.all) expect(isStepKind(node.step.kind)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it('generates valid DAGs often enough to exercise the engine side', () => {
    const samples = fc.sample(dagDocument, { numRuns: 300, seed: 18 });
    const valid = samples.filter((spec) => parseDagSpec(spec, { name: 'gen-dag' }).valid).length;
    expect(valid).toBeGreaterThan(60);
  });
});
