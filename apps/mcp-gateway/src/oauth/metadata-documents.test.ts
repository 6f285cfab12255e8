import { OutboundAllowList } from '@dagu-mcp/runtime';
import { MetadataDocuments } from './metadata-documents';

// A metadata-document URL pointing at a private address is refused by the SSRF guard
// (the guard itself: packages/runtime/src/net; a served document end to end: test/e2e/oauth.e2e.test.ts).
describe('MetadataDocuments SSRF guard', () => {
  const documents = new MetadataDocuments({
    allow: new OutboundAllowList([]),
    allowNonPublic: false,
    timeoutMs: 2000,
    maxBytes: 4096,
    defaultCacheMs: 0,
    maxCacheMs: 0,
  });

  // The refusal names the address and the rule.
  it.each([
    ['https://127.0.0.1:9/client.json', '127.0.0.1 is loopback'],
    ['https://localhost:9/client.json', 'is loopback'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is link-local'],
    ['https://10.0.0.1/client.json', '10.0.0.1 is private'],
    ['https://[::1]:9/client.json', '::1 is loopback'],
  ])('refuses %s before connecting', async (url, why) => {
    await expect(documents.load(url)).rejects.toThrow(`${why}: non-public addresses are not reached`);
  });

  it('opens no non-public address through an allow-list entry (OAUTH_CIMD_ALLOWED_HOSTS only narrows)', async () => {
    const listed = new MetadataDocuments({
      allow: new OutboundAllowList(['127.0.0.1', '10.0.0.0/8']),
      allowNonPublic: false,
      timeoutMs: 2000,
      maxBytes: 4096,
      defaultCacheMs: 0,
      maxCacheMs: 0,
    });
    await expect(listed.load('https://127.0.0.1:9/client.json')).rejects.toThrow('127.0.0.1 is loopback');
    await expect(listed.load('https://10.1.2.3:9/client.json')).rejects.toThrow('10.1.2.3 is private');
  });

  it('refuses a client_id that is not an https URL with a path', async () => {
    await expect(documents.load('http://example.com/client.json')).rejects.toThrow(/https URL with a path/);
    await expect(documents.load('https://example.com/')).rejects.toThrow(/https URL with a path/);
  });

  it('refuses hosts off the allow-list', async () => {
    const listed = new MetadataDocuments({
      allow: new OutboundAllowList(['clients.example.com']),
      allowNonPublic: false,
      timeoutMs: 2000,
      maxBytes: 4096,
      defaultCacheMs: 0,
      maxCacheMs: 0,
    });
    await expect(listed.load('https://8.8.8.8/client.json')).rejects.toThrow(/allow-list/);
  });
});
