import { OAuthClientMetadataSchema, type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { guardedFetch, type OutboundAllowList } from '@dagu-mcp/runtime';
import { checkClientMetadata } from './client-metadata';

/** Bounds of metadata-document fetching. */
export interface MetadataDocumentOptions {
  /** Destinations allowed; empty: any public host. */
  readonly allow: OutboundAllowList;
  /** Allow loopback and private addresses (a test-only setting: `OAUTH_CIMD_ALLOW_PRIVATE`). */
  readonly allowNonPublic: boolean;
  /** Deadline of one fetch, ms. */
  readonly timeoutMs: number;
  /** Largest document, bytes. */
  readonly maxBytes: number;
  /** Cache lifetime when the response names none, and the longest honoured, ms. */
  readonly defaultCacheMs: number;
  readonly maxCacheMs: number;
}

/** Why a document was refused (shown to the person at the authorize step, never response content). */
export class MetadataDocumentError extends Error {}

/**
 * Client ID Metadata Documents (mcp-revisions §3): a
 * `client_id` that is an `https` URL with a path names a JSON document the
 * server fetches under the SSRF guard (`guardedFetch`), whose `client_id`
 * must equal the URL and whose redirect URIs obey the registration rules. The
 * parsed document is cached per replica as the response's `Cache-Control:
 * max-age` says (bounded by `maxCacheMs`; `no-store` caches nothing).
 */
export class MetadataDocuments {
  private readonly cache = new Map<string, { client: OAuthClientInformationFull; until: number }>();

  constructor(private readonly options: MetadataDocumentOptions) {}

  /**
   * The client the document at `url` describes.
   *
   * @throws MetadataDocumentError when the URL, the fetch or the document is refused
   */
  async load(url: string, now = Date.now()): Promise<OAuthClientInformationFull> {
    const cached = this.cache.get(url);
    if (cached !== undefined && cached.until > now) return cached.client;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new MetadataDocumentError('the client_id is not a URL');
    }
    if (parsed.protocol !== 'https:' || parsed.pathname === '/' || parsed.hash !== '') {
      throw new MetadataDocumentError('a metadata-document client_id must be an https URL with a path and no fragment');
    }
    const response = await guardedFetch(url, {
      allow: this.options.allow,
      allowNonPublic: this.options.allowNonPublic,
      timeoutMs: this.options.timeoutMs,
      maxBytes: this.options.maxBytes,
      headers: { accept: 'application/json' },
    }).catch((err: unknown) => {
      throw new MetadataDocumentError(
        `the client metadata document could not be fetched: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    if (response.status !== 200)
      throw new MetadataDocumentError(`the client metadata document answered ${response.status}`);
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new MetadataDocumentError('the client metadata document is not JSON');
    }
    const result = OAuthClientMetadataSchema.safeParse(body);
    if (!result.success) throw new MetadataDocumentError('the client metadata document is not valid client metadata');
    const claimed = typeof body === 'object' && body !== null && 'client_id' in body ? body.client_id : undefined;
    if (claimed !== url) throw new MetadataDocumentError("the document's client_id differs from its URL");
    try {
      checkClientMetadata(result.data);
    } catch (err) {
      throw new MetadataDocumentError(err instanceof Error ? err.message : String(err));
    }
    const method = result.data.token_endpoint_auth_method ?? 'none';
    if (method !== 'none')
      throw new MetadataDocumentError(`token_endpoint_auth_method ${method} is not supported for metadata documents`);
    const client: OAuthClientInformationFull = { ...result.data, client_id: url, token_endpoint_auth_method: 'none' };
    const ttl = this.cacheMs(response.headers['cache-control']);
    if (ttl > 0) {
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(url, { client, until: now + ttl });
    }
    return client;
  }

  private cacheMs(header: string | undefined): number {
    if (header === undefined) return this.options.defaultCacheMs;
    if (/no-store|no-cache/i.test(header)) return 0;
    const maxAge = /max-age=(\d+)/i.exec(header)?.[1];
    if (maxAge === undefined) return this.options.defaultCacheMs;
    return Math.min(Number(maxAge) * 1000, this.options.maxCacheMs);
  }
}
