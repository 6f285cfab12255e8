import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { clearDagSpecMemo, parseDagSpecMemo } from './dag-spec-memo';

/** The parsed-spec memo: exact, shared frozen, bounded. */
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
  const big = `description: "${'x'.repeat(600 * 1024)}"\n${SPEC}`;
  const a = parseDagSpecMemo(big, 'big');
  expect(a.valid).toBe(true);
  expect(parseDagSpecMemo(big, 'big')).not.toBe(a);
});

it('weighs a result by what it expands to: a short spec whose aliases build a large DAG is not held', () => {
  // About 1 KB of YAML whose aliases expand to a DAG far over the per-entry bound once parsed.
  const list = `&l [&w "echo ${'y'.repeat(900)}", ${Array.from({ length: 39 }, () => '*w').join(', ')}]`;
  const steps = Array.from({ length: 20 }, (_, i) => `  - name: s${i}\n    run: ${i === 0 ? list : '*l'}\n`).join('');
  const spec = `steps:\n${steps}`;
  const a = parseDagSpecMemo(spec, 'aliased');
  expect(spec.length).toBeLessThan(4096);
  expect(JSON.stringify(a).length).toBeGreaterThan(512 * 1024);
  expect(parseDagSpecMemo(spec, 'aliased')).not.toBe(a);
});
