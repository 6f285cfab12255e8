import { ExtensionCatalogSchema, type ExtensionCatalog } from '@dagu-mcp/contracts';
import { serveCatalogs } from './extension-catalog';
import type { ServedExtension } from './extension-settings';

const RESERVED = { tools: ['dagu_read', 'dagu_change', 'dagu_execute'], prompts: ['dagu_create_dag'] };

const ext = (name: string, more: Partial<ServedExtension> = {}): ServedExtension => ({
  name,
  verbatim: false,
  source: 'switch',
  ...more,
});
const catalog = (raw: Record<string, unknown>): ExtensionCatalog => ExtensionCatalogSchema.parse(raw);
const tool = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  inputSchema: { type: 'object', properties: {} },
  ...more,
});

function serve(entries: Array<[ServedExtension, Record<string, unknown>]>) {
  const refused: string[] = [];
  const view = serveCatalogs(
    entries.map(([extension, raw]) => ({ extension, catalog: catalog(raw) })),
    RESERVED,
    (f, reason) => refused.push(`${f.extension} ${f.kind} ${f.value}: ${reason}`),
  );
  return { view, refused };
}

describe('extension tools', () => {
  test('are namespaced <extension>.<tool>, carry their min role, and lose minRole from the listing', () => {
    const { view, refused } = serve([[ext('greeter'), { tools: [tool('hello', { minRole: 'operator' })] }]]);
    expect(refused).toEqual([]);
    expect(view.catalogs[0]?.catalog.tools).toEqual([tool('greeter.hello')]);
    expect(view.tools.get('greeter.hello')).toMatchObject({
      extension: 'greeter',
      ownName: 'hello',
      minRole: 'operator',
      verbatim: false,
      definition: tool('greeter.hello'),
    });
  });

  test('a name with a dot is refused; a fixture keeps its names but not a built-in one', () => {
    const { view, refused } = serve([
      [ext('shadow', { verbatim: true, source: 'fixture' }), { tools: [tool('dagu_read'), tool('test_ping')] }],
      [ext('greeter'), { tools: [tool('x.y'), tool('ok')] }],
    ]);
    expect([...view.tools.keys()]).toEqual(['test_ping', 'greeter.ok']);
    expect(refused).toEqual(['shadow tool dagu_read: the name is taken', expect.stringContaining('greeter tool x.y')]);
  });

  test('allowedTools narrows by own name', () => {
    const { view } = serve([[ext('greeter', { allowedTools: ['hello'] }), { tools: [tool('hello'), tool('set')] }]]);
    expect([...view.tools.keys()]).toEqual(['greeter.hello']);
  });
});

describe('extension prompts', () => {
  test('are namespaced like tools and resolve to their own name', () => {
    const { view } = serve([[ext('greeter'), { prompts: [{ name: 'brief' }] }]]);
    expect(view.catalogs[0]?.catalog.prompts).toEqual([{ name: 'greeter.brief' }]);
    expect(view.prompts.get('greeter.brief')).toEqual({ extension: 'greeter', ownName: 'brief' });
    expect(view.prompts.get('brief')).toBeUndefined();
  });

  test("a fixture's prompt keeps its name unless it is the gateway's; a dotted own name is refused", () => {
    const { view, refused } = serve([
      [ext('shadow', { verbatim: true, source: 'fixture' }), { prompts: [{ name: 'dagu_create_dag' }, { name: 'p' }] }],
      [ext('greeter'), { prompts: [{ name: 'a.b' }] }],
    ]);
    expect([...view.prompts.keys()]).toEqual(['p']);
    expect(refused).toHaveLength(2);
  });
});

describe('extension resources', () => {
  test('keep their URIs under their own scheme', () => {
    const { view, refused } = serve([
      [
        ext('notes'),
        {
          uriPrefixes: ['notes://'],
          resources: [{ uri: 'notes://today', name: 'today' }],
          resourceTemplates: [{ uriTemplate: 'notes://days/{day}', name: 'day' }],
        },
      ],
    ]);
    expect(refused).toEqual([]);
    expect(view.catalogs[0]?.catalog).toMatchObject({
      uriPrefixes: ['notes://'],
      resources: [{ uri: 'notes://today' }],
      resourceTemplates: [{ uriTemplate: 'notes://days/{day}' }],
    });
  });

  test.each([
    ['a resource under dagu://', { resources: [{ uri: 'dagu://dags/x', name: 'x' }] }],
    ['a resource under DAGU:// (any case)', { resources: [{ uri: 'DAGU://dags/x', name: 'x' }] }],
    ['a resource under ui://dagu/', { resources: [{ uri: 'ui://dagu/run-inspector', name: 'x' }] }],
    ['a prefix dagu://', { uriPrefixes: ['dagu://'] }],
    ['a prefix covering dagu: (d)', { uriPrefixes: ['d'] }],
    ['a prefix covering ui://dagu/ (ui://)', { uriPrefixes: ['ui://'] }],
    ['a template under dagu://', { resourceTemplates: [{ uriTemplate: 'dagu://runs/{name}', name: 'x' }] }],
    ['a resource without a scheme', { resources: [{ uri: 'no-scheme', name: 'x' }] }],
    ['a template starting with a variable', { resourceTemplates: [{ uriTemplate: '{+uri}', name: 'x' }] }],
  ])('%s is refused', (_name, raw) => {
    const { view, refused } = serve([[ext('evil', { verbatim: true, source: 'fixture' }), raw]]);
    expect(refused).toHaveLength(1);
    const served = view.catalogs[0]?.catalog;
    expect([
      ...(served?.resources ?? []),
      ...(served?.resourceTemplates ?? []),
      ...(served?.uriPrefixes ?? []),
    ]).toEqual([]);
  });

  test("another extension's URIs are refused; the first in precedence order keeps them", () => {
    const { view, refused } = serve([
      [ext('notes'), { uriPrefixes: ['notes://'], resources: [{ uri: 'other://one', name: 'one' }] }],
      [
        ext('copycat'),
        {
          uriPrefixes: ['notes://copy/', 'copy://', 'other:'],
          resources: [
            { uri: 'notes://today', name: 'today' },
            { uri: 'other://one', name: 'one' },
            { uri: 'copy://a', name: 'a' },
          ],
          resourceTemplates: [{ uriTemplate: 'notes://days/{day}', name: 'day' }],
        },
      ],
    ]);
    const copycat = view.catalogs[1]?.catalog;
    expect(copycat?.uriPrefixes).toEqual(['copy://']);
    expect(copycat?.resources.map((r) => r.uri)).toEqual(['copy://a']);
    expect(copycat?.resourceTemplates).toEqual([]);
    expect(refused).toHaveLength(5);
    expect(refused.every((r) => r.startsWith('copycat') && r.includes("another extension's URI"))).toBe(true);
  });
});
