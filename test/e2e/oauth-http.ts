import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * Plays a person's browser over plain HTTP for the OAuth e2e tests (issue 23):
 * a cookie jar, manual redirects, and the forms of the sign-in and consent pages.
 */

/** Hidden inputs of the first form of a page, as name → value. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input\b[^>]*>/gi)) {
    const tag = match[0];
    if (!/type="hidden"/i.test(tag)) continue;
    const name = /name="([^"]*)"/i.exec(tag)?.[1];
    const value = /value="([^"]*)"/i.exec(tag)?.[1] ?? '';
    if (name !== undefined) fields[name] = decodeEntities(value);
  }
  return fields;
}

/** The `value`s of the checked checkboxes named `name` (the consent page's scopes, issue 41 item 3). */
export function checkedValues(html: string, name: string): string[] {
  const values: string[] = [];
  for (const match of html.matchAll(/<input\b[^>]*>/gi)) {
    const tag = match[0];
    if (!/type="checkbox"/i.test(tag) || !/\schecked\b/i.test(tag)) continue;
    if (/name="([^"]*)"/i.exec(tag)?.[1] !== name) continue;
    values.push(decodeEntities(/value="([^"]*)"/i.exec(tag)?.[1] ?? ''));
  }
  return values;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x3D;/g, '=')
    .replace(/&#x27;/g, "'")
    .replace(/&#x2F;/g, '/')
    .replace(/&#x60;/g, '`')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** One HTTP exchange of the pretend browser. */
export interface Hop {
  readonly status: number;
  readonly location: string | undefined;
  readonly text: string;
  readonly headers: Headers;
}

/** A browser without JavaScript: keeps cookies, follows nothing by itself. */
export class PretendBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly origin: string) {}

  /** The cookie value, if set. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async get(url: string): Promise<Hop> {
    return this.send(url, { method: 'GET' });
  }

  /** Posts a form; an array value is sent as that many fields of the name (checkboxes). */
  async postForm(url: string, form: Record<string, string | readonly string[]>): Promise<Hop> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) {
      for (const one of typeof value === 'string' ? [value] : value) body.append(name, one);
    }
    return this.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.origin },
      body: body.toString(),
    });
  }

  private async send(url: string, init: RequestInit): Promise<Hop> {
    const absolute = new URL(url, this.origin).href;
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(absolute, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string> | undefined), ...(cookie !== '' ? { cookie } : {}) },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = (pair ?? '').indexOf('=');
      if (eq > 0) {
        const name = (pair ?? '').slice(0, eq).trim();
        const value = (pair ?? '').slice(eq + 1).trim();
        if (value === '' || /max-age=0/i.test(set)) this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
    }
    return {
      status: res.status,
      location: res.headers.get('location') ?? undefined,
      text: await res.text(),
      headers: res.headers,
    };
  }
}

/**
 * Walks an authorization URL as a person would: (sign in when asked) → consent
 * → the decision. Returns the final redirect to the client's redirect URI.
 *
 * @param decision `allow`, `deny`, or `none` to stop at the consent page
 * @param untick   scopes to untick on the consent page (the rest stay as the page checked them)
 */
export async function walkAuthorization(
  browser: PretendBrowser,
  authorizationUrl: string,
  credentials: { username: string; password: string },
  decision: 'allow' | 'deny' = 'allow',
  untick: readonly string[] = [],
): Promise<{ redirect: URL; consentShown: boolean; consentPage?: string }> {
  let hop = await browser.get(authorizationUrl);
  if (hop.status === 303 && hop.location?.includes('/signin') === true) {
    const signinUrl = hop.location;
    const page = await browser.get(signinUrl);
    expect(page.status).toBe(200);
    hop = await browser.postForm(new URL(signinUrl, 'http://x').pathname, {
      ...hiddenFields(page.text),
      next: new URL(signinUrl, 'http://x').searchParams.get('next') ?? '',
      username: credentials.username,
      password: credentials.password,
    });
    expect(hop.status).toBe(303);
    hop = await browser.get(hop.location ?? '');
  }
  if (hop.status === 302 && hop.location !== undefined) return { redirect: new URL(hop.location), consentShown: false };
  expect(hop.status).toBe(200);
  expect(hop.text).toContain('Authorize');
  const fields = hiddenFields(hop.text);
  const action = /<form[^>]*action="([^"]*consent[^"]*)"/i.exec(hop.text)?.[1] ?? '';
  const scope = checkedValues(hop.text, 'scope').filter((s) => !untick.includes(s));
  const answer = await browser.postForm(action, { ...fields, scope, decision });
  expect(answer.status).toBe(303);
  return { redirect: new URL(answer.location ?? ''), consentShown: true, consentPage: hop.text };
}

/** The SDK's client-side provider, in memory; `authorizationUrl` is where it sends the person. */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(
    private readonly redirect: string,
    private readonly scope?: string,
  ) {}
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'e2e client',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.scope !== undefined ? { scope: this.scope } : {}),
    };
  }
  state(): string {
    return 'state-123';
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

/**
 * POSTs a bare `initialize` (2025-06-18) to an MCP endpoint with `token` as the bearer: the probe
 * the OAuth tests use to see whether a token opens an endpoint (200) or not (401).
 */
export async function initializeStatus(url: string, token: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}
