import { capScopes, requestedScopes, scopesNeededBy } from './scopes';

// Scopes map to roles and to MCP requests.
describe('scopes', () => {
  it('a request without scope asks for all three; unknown scopes are dropped', () => {
    expect(requestedScopes(undefined)).toEqual(['dagu:read', 'dagu:change', 'dagu:execute']);
    expect(requestedScopes(['dagu:execute', 'openid', 'dagu:read'])).toEqual(['dagu:read', 'dagu:execute']);
  });

  it.each([
    ['viewer', ['dagu:read']],
    ['operator', ['dagu:read', 'dagu:execute']],
    ['developer', ['dagu:read', 'dagu:change', 'dagu:execute']],
    ['admin', ['dagu:read', 'dagu:change', 'dagu:execute']],
  ] as const)('a %s holds at most %j', (role, held) => {
    expect(capScopes(['dagu:read', 'dagu:change', 'dagu:execute'], role)).toEqual(held);
  });

  it('names the scope each MCP message needs', () => {
    const call = (name: string, args: unknown = {}) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    expect(scopesNeededBy(call('dagu_read'))).toEqual(['dagu:read']);
    // A dagu_change preview only reads; only an apply needs dagu:change.
    expect(scopesNeededBy(call('dagu_change'))).toEqual(['dagu:read']);
    expect(scopesNeededBy(call('dagu_change', { mode: 'preview' }))).toEqual(['dagu:read']);
    expect(scopesNeededBy(call('dagu_change', { mode: 'apply' }))).toEqual(['dagu:change']);
    expect(scopesNeededBy(call('dagu_change', { mode: ' apply ' }))).toEqual(['dagu:change']);
    expect(scopesNeededBy(call('dagu_change', { mode: 'APPLY' }))).toEqual(['dagu:read']);
    expect(scopesNeededBy(call('dagu_change', 'not an object'))).toEqual(['dagu:read']);
    expect(scopesNeededBy(call('dagu_execute'))).toEqual(['dagu:execute']);
    expect(scopesNeededBy({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toEqual([]);
    expect(scopesNeededBy({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'dagu://x' } })).toEqual([
      'dagu:read',
    ]);
    expect(scopesNeededBy([call('dagu_execute'), call('dagu_change', { mode: 'apply' })])).toEqual([
      'dagu:change',
      'dagu:execute',
    ]);
  });
});
