import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { clearDagSpecMemo, parseDagSpecMemo } from './dag-spec-memo';

/** The parsed-spec memo (issue 28): exact, shared frozen, bounded. */
beforeEach(() => clearDagSpecMemo());

const SPEC = 'params: [A=1]\nsteps:\n  - name: a\n    run: echo ${A}\n  - name: b\n    depends: [a]\n    run: "true"\n';

it('gives what parseDagSpec gives, the same object for the same name and spec', () => {
  const first = parseDagSpecMemo(SPEC, 'memo');
  expect(first).toEqual(parseDagSpec(SPEC, { name: 'memo' }));
  expect(parseDagSpecMemo(SPEC, 'memo')).toBe(first);
  // The name is part of the key: a DAG parsed under another name is another result.
  const other = parseDagSpecMemo(SPEC, 'other');
  expect(other).not.toBe(first);
  expect(other.dag?.name).toBe('other');
});

it('shares results deep-frozen, so no caller can change the next run’s DAG', () => {
  const result = parseDagSpecMemo(SPEC, 'memo');
  const dag = result.dag;
  if (dag === undefined) throw new Error('expected a valid DAG');
  expect(Object.isFrozen(dag)).toBe(true);
  expect(Object.isFrozen(dag.steps)).toBe(true);
  expect(Object.isFrozen(dag.steps[0])).toBe(true);
  expect(() => {
    (dag.steps as unknown as unknown[]).push({});
  }).toThrow(TypeError);
});

it('keeps invalid results too, with their errors', () => {
  const bad = parseDagSpecMemo('steps: [', 'memo');
  expect(bad.valid).toBe(false);
  expect(bad.errors[0]).toMatch(/invalid YAML/);
  expect(parseDagSpecMemo('steps: [', 'memo')).toBe(bad);
});

it('holds at most 256 results, dropping the least recently used', () => {
  const kept = parseDagSpecMemo(SPEC, 'kept');
  const firstOut = parseDagSpecMemo(SPEC, 'dropped');
  for (let i = 0; i < 255; i += 1) {
    parseDagSpecMemo(SPEC, `filler-${i}`);
    // `kept` is used all along, so it stays the most recent of the early ones.
    if (i % 50 === 0) parseDagSpecMemo(SPEC, 'kept');
  }
  expect(parseDagSpecMemo(SPEC, 'kept')).toBe(kept);
  expect(parseDagSpecMemo(SPEC, 'dropped')).not.toBe(firstOut);
});

it('parses a very large spec each time and never holds it', () => {
  const big = `description: "${'x'.repeat(300 * 1024)}"\n${SPEC}`;
  const a = parseDagSpecMemo(big, 'big');
  expect(a.valid).toBe(true);
  expect(parseDagSpecMemo(big, 'big')).not.toBe(a);
});
