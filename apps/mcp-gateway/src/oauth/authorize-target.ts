import { redirectUriMatches } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { cspSourceOf } from './redirect-uris';

/** Where the gateway's clients are looked up (the provider's `clientsStore`). */
export interface ClientLookup {
  getClient(clientId: string): Promise<OAuthClientInformationFull | undefined>;
}

/**
 * The redirect URI an authorization request answers to, checked as the SDK's authorize
 * handler checks it before it answers anything: the client exists, and `redirect_uri` is
 * one of its registered URIs (a loopback one on any port, RFC 8252 §7.3, the SDK's own
 * `redirectUriMatches`) or, absent, its only registered URI.
 *
 * @returns undefined for an unknown client or a redirect URI not registered for it
 */
export async function authorizeRedirectOf(
  clients: ClientLookup,
  params: { readonly clientId: string | undefined; readonly redirectUri: string | undefined },
): Promise<string | undefined> {
  if (params.clientId === undefined || params.clientId === '') return undefined;
  const client = await clients.getClient(params.clientId);
  if (client === undefined) return undefined;
  const requested = params.redirectUri;
  if (requested === undefined) return client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined;
  return client.redirect_uris.some((registered) => redirectUriMatches(requested, registered)) ? requested : undefined;
}

/**
 * The CSP `form-action` source the sign-in page adds for its `next`: when
 * `next` is this gateway's own authorize endpoint (`<basePath>/oauth/authorize?…`), the
 * authorize step after sign-in may redirect straight to the client (a remembered consent),
 * and CSP applies `form-action` to that redirect. Only a validated redirect
 * ({@link authorizeRedirectOf}) becomes a source, as narrow as {@link cspSourceOf} makes it.
 *
 * @param next the sign-in page's `next`, already a path on this origin
 * @returns undefined for any other `next`, an unknown client, an unregistered redirect, or
 *   a client that cannot be looked up now (the page then keeps plain `'self'`)
 */
export async function signInFormTarget(
  clients: ClientLookup,
  basePath: string,
  next: string,
): Promise<string | undefined> {
  const url = new URL(next, 'http://gateway.invalid');
  if (url.pathname !== `${basePath}/oauth/authorize`) return undefined;
  const param = (name: string): string | undefined => url.searchParams.get(name) ?? undefined;
  try {
    const redirect = await authorizeRedirectOf(clients, {
      clientId: param('client_id'),
      redirectUri: param('redirect_uri'),
    });
    return redirect === undefined ? undefined : cspSourceOf(redirect);
  } catch {
    // A metadata document that cannot be fetched now: the sign-in form still shows, unwidened.
    return undefined;
  }
}
