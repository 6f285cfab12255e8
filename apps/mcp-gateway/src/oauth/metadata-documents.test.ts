import { OutboundAllowList } from '@dagu-mcp/runtime';
import { MetadataDocuments } from './metadata-documents';

// Issue 23 item 2: a metadata-document URL pointing at a private address is refused by the SSRF guard
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

  it.each([
    'https://127.0.0.1:9/client.json',
    'https://localhost:9/client.json',
    'https://169.254.169.254/latest/meta-data',
    'https://10.0.0.1/client.json',
    'https://[::1]:9/client.json',
  ])('refuses %s before connecting', async (url) => {
    await expect(documents.load(url)).rejects.toThrow(/private, loopback or link-local/);
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
