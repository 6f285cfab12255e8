import type { InterpolationScope } from './interpolate';
import { aggregateOf, capturedStepsOf, evaluateCollect } from './foreach-collect';

/** Foreach `collect` (the collected values and the aggregate Dagu users know). */
const scope: InterpolationScope = {
  params: new Map([['P', 'p1']]),
  env: {},
  outputVars: new Map([['foreach', JSON.stringify({ item: { id: 7 }, index: 1, key: 'k7' })]]),
  steps: new Map([['write', { outputs: { N: '3' }, fields: {}, exitCode: 0, stdout: 'hello' }]]),
  context: { runId: 'r', dagName: 'd', attemptId: 'a' },
};

describe('foreach collect', () => {
  it('reads stdout, outputs, foreach values and params in the item scope', () => {
    expect(
      evaluateCollect(
        {
          out: '${steps.write.stdout}',
          n: 'n=${steps.write.outputs.N}',
          id: '${foreach.item.id}/${foreach.key}',
          p: '${params.P}',
        },
        scope,
      ),
    ).toEqual({
      ok: true,
      values: { out: 'hello', n: 'n=3', id: '7/k7', p: 'p1' },
    });
  });

  it('an unresolved Dagu reference fails; other text stays literal', () => {
    expect(evaluateCollect({ v: '${steps.write.stderr} ${steps.nope.outputs.X}' }, scope)).toEqual({
      ok: false,
      error: 'collect v: unresolved ${steps.write.stderr}, ${steps.nope.outputs.X}',
    });
    expect(evaluateCollect({ v: '$HOME ${UNKNOWN}' }, scope)).toEqual({ ok: true, values: { v: '$HOME ${UNKNOWN}' } });
  });

  it('captures only the streams collect names', () => {
    expect([
      ...capturedStepsOf({ a: '${steps.write.stdout}', b: '${steps.other.stderr} ${steps.x.outputs.Y}' }),
    ]).toEqual(['write', 'other']);
    expect(capturedStepsOf(undefined).size).toBe(0);
  });

  it('aggregates in index order; outputs only of succeeded items', () => {
    const { line, outputs } = aggregateOf(
      [
        { index: 1, key: 'b', status: 2, error: 'step w failed' },
        { index: 0, key: 'a', status: 4, collected: { v: 'A' } },
        { index: 2, key: 'c', status: 4, collected: { v: 'C' } },
      ],
      ['v'],
    );
    expect(JSON.parse(line)).toEqual({
      summary: { total: 3, succeeded: 2, failed: 1 },
      items: [
        { index: 0, key: 'a', status: 'succeeded', outputs: { v: 'A' } },
        { index: 1, key: 'b', status: 'failed', error: 'step w failed' },
        { index: 2, key: 'c', status: 'succeeded', outputs: { v: 'C' } },
      ],
      outputs: [{ v: 'A' }, { v: 'C' }],
    });
    expect(outputs).toEqual({ v: '["A","C"]' });
  });
});
