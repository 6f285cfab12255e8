import { ServedExtensions } from './extension-settings';

describe('ServedExtensions', () => {
  test('a test fixture is served as announced; MCP_EXTENSIONS entries are namespaced and checked', async () => {
    const served = new ServedExtensions({ staticNames: ['warehouse', 'conformance'], fixtureNames: ['conformance'] });
    expect(await served.served()).toEqual([
      { name: 'conformance', verbatim: true, source: 'fixture' },
      { name: 'warehouse', verbatim: false, source: 'static' },
    ]);
    expect(served.configuredNames).toEqual(['conformance', 'warehouse']);
  });

  test('without fixtures nothing is verbatim', async () => {
    const served = new ServedExtensions({ staticNames: ['shadow'] });
    expect((await served.served()).every((s) => !s.verbatim)).toBe(true);
  });
});
