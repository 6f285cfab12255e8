import { OAuthAddresses, resolvePublicUrl } from './addresses';

// Issuer, resources and metadata URLs come from PUBLIC_URL.
describe('OAuthAddresses', () => {
  const a = new OAuthAddresses('https://ops.example.com/dagu/', ['/mcp', /^\/mcp\/v1\/[^/]+\/[^/]+$/]);

  it('derives the issuer, endpoints and resources from PUBLIC_URL', () => {
    expect(a.issuer).toBe('https://ops.example.com/dagu');
    expect(a.endpoint('token')).toBe('https://ops.example.com/dagu/oauth/token');
    expect(a.mcpResource).toBe('https://ops.example.com/dagu/mcp');
    expect(a.resourceForPath('/mcp/v1/ws/agent')).toBe('https://ops.example.com/dagu/mcp/v1/ws/agent');
    expect(a.resourceForPath('/api/v1/dags')).toBeUndefined();
  });

  it('recognises only its own resources', () => {
    expect(a.isResource('https://ops.example.com/dagu/mcp')).toBe(true);
    expect(a.isResource('https://ops.example.com/mcp')).toBe(false);
    expect(a.isResource('https://evil.example.com/dagu/mcp')).toBe(false);
  });

  it('inserts the well-known segment after the origin (RFC 9728 §3.1)', () => {
    expect(a.protectedResourceMetadataUrl(a.mcpResource)).toBe(
      'https://ops.example.com/.well-known/oauth-protected-resource/dagu/mcp',
    );
  });

  it('derives PUBLIC_URL on loopback only', () => {
    const base = { publicUrl: undefined, host: '127.0.0.1', port: 8080, basePath: '/dagu', loopback: true };
    expect(resolvePublicUrl(base)).toEqual({ url: 'http://127.0.0.1:8080/dagu' });
    expect(resolvePublicUrl({ ...base, host: '0.0.0.0', loopback: false })).toHaveProperty('problem');
    expect(resolvePublicUrl({ ...base, publicUrl: 'https://x.example.com/' })).toEqual({
      url: 'https://x.example.com',
    });
  });
});
