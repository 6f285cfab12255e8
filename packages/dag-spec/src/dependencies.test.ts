/**
 * topologicalOrder and findCycles (dagu-model.md §4: cycles are rejected at
 * validation; the engine runs steps in topological order).
 */
import {
  findCycles,
  parseDagSpec,
  rewindSet,
  topologicalOrder,
  upstreamOf,
  type NormalizedDag,
  type NormalizedStep,
} from './index';

function stepsOf(spec: Record<string, string[]>): NormalizedStep[] {
  return Object.entries(spec).map(([name, depends]) => ({
    name,
    kind: 'command',
    env: [],
    depends,
    continueOn: { failure: false, skipped: false, exitCode: [], output: [], markSuccess: false },
    preconditions: [],
    outputs: [],
  }));
}

describe('topologicalOrder', () => {
  it.each<[string, Record<string, string[]>, string[]]>([
    ['no dependencies keeps declaration order', { a: [], b: [], c: [] }, ['a', 'b', 'c']],
    ['a dependency declared later runs first', { a: ['c'], b: [], c: [] }, ['b', 'c', 'a']],
    ['diamond', { top: [], l: ['top'], r: ['top'], bottom: ['l', 'r'] }, ['top', 'l', 'r', 'bottom']],
  ])('%s', (_label, spec, expected) => {
    expect(topologicalOrder({ steps: stepsOf(spec) }).map((s) => s.name)).toEqual(expected);
  });

  it('throws on a cycle or a missing step (never the case for a valid DAG)', () => {
    expect(() => topologicalOrder({ steps: stepsOf({ a: ['b'], b: ['a'] }) })).toThrow('dependency cycle detected');
    expect(() => topologicalOrder({ steps: stepsOf({ a: ['zz'] }) })).toThrow('step a depends on non-existent step zz');
  });

  it('orders a parsed chain DAG', () => {
    const result = parseDagSpec(
      'type: chain\nsteps:\n  - {name: x, run: a}\n  - {name: y, run: b}\n  - {name: z, run: c}\n',
      { name: 't' },
    );
    const dag: NormalizedDag | undefined = result.dag;
    expect(dag && topologicalOrder(dag).map((s) => s.name)).toEqual(['x', 'y', 'z']);
  });
});

it('orders a foreach body', () => {
  const yaml =
    'steps:\n  - id: l\n    foreach:\n      items: [a]\n      steps:\n        - {id: b, run: x, depends: c}\n        - {id: c, run: y}\n';
  const body = parseDagSpec(yaml, { name: 't' }).dag?.steps[0]?.foreach?.steps ?? [];
  expect(topologicalOrder({ steps: body }).map((s) => s.name)).toEqual(['c', 'b']);
});

describe('findCycles', () => {
  it.each<[string, Record<string, string[]>, string[][]]>([
    ['none', { a: [], b: ['a'] }, []],
    ['self', { a: ['a'] }, [['a', 'a']]],
    [
      'two independent cycles',
      { a: ['b'], b: ['a'], c: ['d'], d: ['c'] },
      [
        ['a', 'b', 'a'],
        ['c', 'd', 'c'],
      ],
    ],
    ['starts at the first declared step', { x: [], b: ['c'], c: ['a'], a: ['b'] }, [['b', 'c', 'a', 'b']]],
  ])('%s', (_label, spec, expected) => {
    expect(findCycles(stepsOf(spec))).toEqual(expected);
  });
});

describe('rewindSet (approval rewind_to)', () => {
  const steps = [
    { name: 'a', depends: [] },
    { name: 'b', depends: ['a'] },
    { name: 'c', depends: ['a'] },
    { name: 'side', depends: ['a'] },
    { name: 'gate', depends: ['b', 'c', 'x'] },
    { name: 'x', depends: [] },
  ];
  it('is the target, the gate and every step on a path between them', () => {
    expect([...rewindSet(steps, 'a', 'gate')].sort()).toEqual(['a', 'b', 'c', 'gate']);
    expect([...rewindSet(steps, 'b', 'gate')].sort()).toEqual(['b', 'gate']);
    expect([...rewindSet(steps, 'gate', 'gate')]).toEqual(['gate']);
    expect([...rewindSet(steps, 'side', 'gate')]).toEqual([]);
    expect([...upstreamOf(steps, 'gate')].sort()).toEqual(['a', 'b', 'c', 'x']);
  });
});
