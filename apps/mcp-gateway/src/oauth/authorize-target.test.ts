import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { signInFormTarget, type ClientLookup } from './authorize-target';

// The sign-in page widens form-action only for a valid pending authorization.
const clients: ClientLookup = {
  getClient: async (clientId) => {
    if (clientId === 'broken') throw new Error('metadata document unreachable');
    const uris: Record<string, string[]> = {
      loopback: ['http://127.0.0.1/callback'],
      web: ['https://app.example.com/cb', 'https://app.example.com/other'],
      native: ['com.example.app:/oauth2redirect'],
    };
    const redirect_uris = uris[clientId];
    if (redirect_uris === undefined) return undefined;
    const client: OAuthClientInformationFull = { client_id: clientId, redirect_uris };
    return client;
  },
};

const next = (params: Record<string, string>, path = '/dagu/oauth/authorize'): string =>
  `${path}?${new URLSearchParams({ response_type: 'code', code_challenge: 'c', ...params }).toString()}`;

describe('signInFormTarget', () => {
  it('names the validated redirect of a pending authorization under BASE_PATH', async () => {
    const target = (params: Record<string, string>) => signInFormTarget(clients, '/dagu', next(params));
    // A loopback redirect on any port (RFC 8252 §7.3), without its query.
    expect(await target({ client_id: 'loopback', redirect_uri: 'http://127.0.0.1:4711/callback' })).toBe(
      'http://127.0.0.1:4711/callback',
    );
    expect(await target({ client_id: 'web', redirect_uri: 'https://app.example.com/other' })).toBe(
      'https://app.example.com/other',
    );
    expect(await target({ client_id: 'native' })).toBe('com.example.app:');
  });

  it('gives nothing for an unknown client, an unregistered or ambiguous redirect, or a lookup failure', async () => {
    const target = (params: Record<string, string>) => signInFormTarget(clients, '/dagu', next(params));
    expect(await target({ client_id: 'nobody', redirect_uri: 'http://127.0.0.1:4711/callback' })).toBeUndefined();
    expect(await target({ client_id: 'loopback', redirect_uri: 'http://127.0.0.1:4711/elsewhere' })).toBeUndefined();
    expect(await target({ client_id: 'loopback', redirect_uri: 'https://evil.example/callback' })).toBeUndefined();
    expect(await target({ client_id: 'web' })).toBeUndefined();
    expect(await target({ redirect_uri: 'http://127.0.0.1:4711/callback' })).toBeUndefined();
    expect(await target({ client_id: 'broken', redirect_uri: 'http://127.0.0.1/callback' })).toBeUndefined();
  });

  it('gives nothing for a next that is not the authorize endpoint under BASE_PATH', async () => {
    const params = { client_id: 'loopback', redirect_uri: 'http://127.0.0.1:4711/callback' };
    expect(await signInFormTarget(clients, '/dagu', next(params, '/oauth/authorize'))).toBeUndefined();
    expect(await signInFormTarget(clients, '/dagu', next(params, '/dagu/oauth/authorizations'))).toBeUndefined();
    expect(await signInFormTarget(clients, '/dagu', next(params, '/dagu/'))).toBeUndefined();
    expect(await signInFormTarget(clients, '', next(params, '/oauth/authorize'))).toBe(
      'http://127.0.0.1:4711/callback',
    );
  });
});
