import type { ForeachSpec } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from './interpolate';
import { foreachVariable, resolveItems } from './foreach-items';

const scope = (vars: Record<string, string> = {}): InterpolationScope => ({
  params: new Map(),
  env: {},
  outputVars: new Map(Object.entries(vars)),
  steps: new Map(),
  context: { runId: 'r', dagName: 'd', attemptId: 'a' },
});
const spec = (over: Partial<ForeachSpec>): ForeachSpec => ({ items: [], as: 'item', steps: [], ...over });

describe('foreach items (dagu-model §3)', () => {
  test('literal items, default keys, key template', () => {
    expect(resolveItems(spec({ items: ['a', 'b'] }), scope())).toEqual({
      ok: true,
      items: [
        { index: 0, key: 'a', value: 'a' },
        { index: 1, key: 'b', value: 'b' },
      ],
    });
    const keyed = resolveItems(
      spec({ items: [{ id: 'x' }, { id: 'y' }], as: 'row', key: '${foreach.row.id}' }),
      scope(),
    );
    expect(keyed.ok && keyed.items.map((i) => i.key)).toEqual(['x', 'y']);
  });
  test('string items: JSON array, else lines; duplicates and > 1000 fail', () => {
    const fromJson = resolveItems(spec({ items: '${LIST}' }), scope({ LIST: '[1,2,3]' }));
    expect(fromJson.ok && fromJson.items.map((i) => i.key)).toEqual(['1', '2', '3']);
    const fromLines = resolveItems(spec({ items: '${LIST}' }), scope({ LIST: 'a\nb\n' }));
    expect(fromLines.ok && fromLines.items.length).toBe(2);
    expect(resolveItems(spec({ items: ['a', 'a'] }), scope())).toEqual({
      ok: false,
      error: 'duplicate foreach item key a',
    });
    expect(resolveItems(spec({ items: JSON.stringify(Array.from({ length: 1001 }, (_, i) => i)) }), scope()).ok).toBe(
      false,
    );
  });
  test('the foreach variable resolves ${foreach.<as>} in body commands', () => {
    const s = spec({ as: 'episode' });
    const vars = scope({ foreach: foreachVariable(s, { index: 1, key: 'beta', value: 'beta' }) });
    expect(interpolate('echo ${foreach.episode} ${foreach.index}', vars, 'shell')).toBe('echo beta 1');
  });
});
