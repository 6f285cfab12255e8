/**
 * The authorization server's addresses. `publicUrl` is the
 * external origin plus `BASE_PATH` as clients see it (`PUBLIC_URL`, e.g.
 * `https://ops.example.com/dagu`); it is the issuer, and each MCP endpoint's
 * resource is `publicUrl` + the endpoint's path. Never derived from a request.
 */
export class OAuthAddresses {
  /** The issuer, without a trailing slash. */
  readonly issuer: string;
  /** The path part of the issuer (`/dagu`, or empty). */
  readonly issuerPath: string;
  readonly origin: string;

  /**
   * @param publicUrl `PUBLIC_URL` (trailing slashes dropped)
   * @param mcpPaths the MCP endpoint paths below `BASE_PATH` (`/mcp`; agent endpoints add theirs)
   */
  constructor(
    publicUrl: string,
    private readonly mcpPaths: readonly (string | RegExp)[] = ['/mcp'],
  ) {
    const url = new URL(publicUrl);
    this.origin = url.origin;
    this.issuerPath = url.pathname.replace(/\/+$/, '');
    this.issuer = `${this.origin}${this.issuerPath}`;
  }

  /** An endpoint of the server, e.g. `endpoint('token')` → `…/oauth/token`. */
  endpoint(name: 'authorize' | 'token' | 'register' | 'revoke' | 'introspect' | 'jwks' | 'authorizations'): string {
    return `${this.issuer}/oauth/${name}`;
  }

  /** The canonical resource of the main MCP endpoint (`…/mcp`). */
  get mcpResource(): string {
    return `${this.issuer}/mcp`;
  }

  /**
   * The resource an MCP request path names, or undefined when the path is not an
   * MCP endpoint. `path` is below `BASE_PATH` (`/mcp`, `/mcp/v1/ws/agent`).
   */
  resourceForPath(path: string): string | undefined {
    const clean = path.replace(/\/+$/, '') || '/';
    const known = this.mcpPaths.some((p) => (typeof p === 'string' ? p === clean : p.test(clean)));
    return known ? `${this.issuer}${clean}` : undefined;
  }

  /** Whether `resource` is one of this server's MCP resources. */
  isResource(resource: string): boolean {
    if (!resource.startsWith(`${this.issuer}/`)) return false;
    return this.resourceForPath(resource.slice(this.issuer.length)) === resource;
  }

  /** RFC 9728 §3.1: the Protected Resource Metadata URL of `resource` (well-known segment inserted after the origin). */
  protectedResourceMetadataUrl(resource: string): string {
    const url = new URL(resource);
    return `${url.origin}/.well-known/oauth-protected-resource${url.pathname.replace(/\/+$/, '')}`;
  }
}

/**
 * The `PUBLIC_URL` to use: the configured one; else, on a
 * loopback stack, `http://<HOST>:<PORT><BASE_PATH>`.
 *
 * @returns the URL, or the reason OAuth cannot start
 */
export function resolvePublicUrl(input: {
  publicUrl: string | undefined;
  host: string;
  port: number;
  basePath: string;
  loopback: boolean;
}): { url: string } | { problem: string } {
  if (input.publicUrl !== undefined) return { url: input.publicUrl.replace(/\/+$/, '') };
  if (!input.loopback) {
    return {
      problem: `PUBLIC_URL is not set and HOST ${input.host} is not loopback: the OAuth issuer and resource URLs must be what clients see (e.g. https://ops.example.com${input.basePath})`,
    };
  }
  if (input.port === 0) return { problem: 'PUBLIC_URL is not set and PORT is 0: the public address is unknown' };
  const host = input.host.includes(':') ? `[${input.host}]` : input.host;
  return { url: `http://${host}:${input.port}${input.basePath}` };
}
