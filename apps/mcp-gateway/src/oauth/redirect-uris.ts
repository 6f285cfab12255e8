/**
 * Redirect-URI rules of client registration (OAuth 2.1 §2.3,
 * RFC 8252 §7.1 and §7.3): `https` anywhere; `http` only on a loopback host
 * (`127.0.0.1`, `localhost`, `[::1]`, any port); private-use schemes of native
 * apps (`com.example.app:/cb`, a scheme with a dot, RFC 8252 §7.1). Refused:
 * `javascript:`, `data:`, `file:`, `vbscript:`, `blob:`, any URI with a
 * fragment, `*` wildcards, userinfo, and unparsable URIs.
 *
 * @returns undefined when allowed, else the reason (shown in `invalid_redirect_uri`)
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.includes('*')) return 'wildcards are not allowed';
  if (uri.includes('#')) return 'a redirect URI must not have a fragment';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'not an absolute URI';
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (['javascript', 'data', 'file', 'vbscript', 'blob', 'about', 'ftp', 'ws', 'wss'].includes(scheme)) {
    return `the ${scheme}: scheme is not allowed`;
  }
  if (url.username !== '' || url.password !== '') return 'a redirect URI must not carry a user name or password';
  if (scheme === 'https') return url.hostname === '' ? 'an https redirect URI needs a host' : undefined;
  if (scheme === 'http') {
    return isLoopbackHost(url.hostname)
      ? undefined
      : 'http is allowed only on a loopback host (127.0.0.1, localhost, [::1]); use https';
  }
  // RFC 8252 §7.1: a private-use scheme is a reverse domain name, so it contains a dot.
  return scheme.includes('.') ? undefined : 'a private-use scheme must be a reverse domain name (e.g. com.example.app)';
}

/** True for the loopback hosts of RFC 8252 §7.3 (as `URL.hostname` spells them). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** The host a consent page names for a redirect URI: the host of a URL, else the scheme of a native app. */
export function redirectHost(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host !== '' ? url.host : url.protocol.slice(0, -1);
  } catch {
    return uri;
  }
}

/**
 * The narrowest CSP source that lets a page's form answer redirect to `redirectUri`
 * (CSP applies `form-action` to the redirects after a form post): for
 * `http`/`https`, the URI without its query and fragment, with `;`, `,` and whitespace in
 * the path percent-encoded (they would end the source, the directive or the policy; CSP
 * decodes a source's path before matching it); for a native app's private-use scheme
 * (RFC 8252 §7.1), `scheme:`. Call it only with a redirect URI already validated for its
 * client.
 *
 * @returns undefined when no CSP source expresses the target (unparsable, or a host CSP's
 *   grammar has no form for, such as an IPv6 literal): the page keeps plain `'self'`
 */
export function cspSourceOf(redirectUri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    // CSP's host-source grammar: letters, digits, '-' and '.', an optional port; nothing else.
    if (!/^[a-z0-9.-]+(:\d{1,5})?$/i.test(url.host)) return undefined;
    const path = url.pathname.replace(
      /[;,\s]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
    );
    return `${url.protocol}//${url.host}${path}`;
  }
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}
