/**
 * parseDagSpec never throws on user input (spec 022: a validation failure is
 * a result, not a tool error) and its outputs are plain JSON.
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseDagSpec } from './index';

const KEYS = [
  'name',
  'id',
  'run',
  'command',
  'steps',
  'depends',
  'params',
  'env',
  'foreach',
  'items',
  'action',
  'with',
  'type',
  'schedule',
  'handler_on',
  'continue_on',
  'retry_policy',
  'output',
  'outputs',
  'approval',
  'script',
  'dag',
];

const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 5 }),
  ),
})).node;

/** Cases per property: `PROPERTY_RUNS` (the fault suite runs 10,000), else `FUZZ_RUNS`, else `quick`. */
function runs(quick: number): number {
  return Number(process.env.PROPERTY_RUNS ?? process.env.FUZZ_RUNS ?? quick);
}

function checkResult(text: string): void {
  const result = parseDagSpec(text, { name: 'fuzz' });
  expect(result.valid).toBe(result.errors.length === 0);
  expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  // `invalid DAG spec:` is the catch-all for an internal exception: it must never be reached.
  for (const error of result.errors) expect(error).not.toMatch(/^invalid DAG spec:/);
}

describe('parseDagSpec properties', () => {
  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => checkResult(text)),
      { numRuns: runs(300) },
    );
  });

  it('never throws on arbitrary YAML built from DAG keys', () => {
    const doc = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 });
    fc.assert(
      fc.property(doc, (dag) => checkResult(stringify(dag))),
      { numRuns: runs(500) },
    );
  });

  it('a steps list of shell commands is always valid', () => {
    const names = fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(names, (ids) => {
        const steps = ids.map((id, i) => ({ id, run: `echo ${i}`, ...(i > 0 ? { depends: [ids[i - 1]] } : {}) }));
        const result = parseDagSpec(stringify({ steps }), { name: 'gen' });
        const reserved = ids.some((id) =>
          ['env', 'params', 'args', 'stdout', 'stderr', 'output', 'outputs'].includes(id),
        );
        expect(result.valid).toBe(!reserved);
      }),
      { numRuns: runs(200) },
    );
  });
});
