import express, { type Request, type Response, type Router } from 'express';
import { redirectUriMatches } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { clientNameOf } from '../oauth/client-store';
import type { OAuthServer } from '../oauth/oauth-server';
import { requestedScopes, scopeString } from '../oauth/scopes';
import { consentOffer } from './oauth-offer';
import { consentKeyOf } from '../oauth/resource-directory';
import { formOf, pageSessionOf, type ConsentFlow, type PendingAuthorization } from './oauth-consent';

type Params = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The reference design's JSON endpoints for a separate front end:
 * `GET /api/mcp/authorize?<authorization params>` → `{client, user: {id, username},
 * params}`, and `POST /api/mcp/authorize` (`action: "allow" | "deny"`, header
 * `X-CSRF-Token`) → `{ok, redirectUrl}`. Both need the browser session; the
 * parameters are checked as the authorize endpoint checks them (client,
 * registered redirect URI, PKCE S256, resource), so this path grants nothing
 * the page would not.
 */
export function authorizeApi(deps: { server: OAuthServer; consent: ConsentFlow }): Router {
  const { server, consent } = deps;
  const router = express.Router();

  /** The checked request, or an error answer already sent. */
  const check = async (req: Request, res: Response, p: Params): Promise<PendingAuthorization | undefined> => {
    const session = pageSessionOf(res);
    if (session === undefined) return void res.status(401).json({ code: 'unauthenticated', message: 'Sign in first.' });
    const bad = (message: string) =>
      void res.status(400).json({ error: 'invalid_request', error_description: message });
    const clientId = str(p.client_id);
    const client = clientId === undefined ? undefined : await server.provider.clientsStore.getClient(clientId);
    if (client === undefined)
      return void res.status(400).json({ error: 'invalid_client', error_description: 'Invalid client_id' });
    const redirectUri =
      str(p.redirect_uri) ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
    if (redirectUri === undefined || !client.redirect_uris.some((r) => redirectUriMatches(redirectUri, r))) {
      return bad('Unregistered redirect_uri');
    }
    const challenge = str(p.code_challenge);
    if (challenge === undefined || (p.code_challenge_method ?? 'S256') !== 'S256')
      return bad('PKCE with S256 is required');
    const resource = str(p.resource) ?? server.addresses.mcpResource;
    // The same offer as the consent page: the resource must take OAuth sign-in now,
    // a delegated agent must name the person, and the scopes follow the agent's policy.
    const offer = await consentOffer(server, resource, requestedScopes(str(p.scope)?.split(' ')), {
      username: session.username,
      role: session.principal.role,
    });
    if (offer === undefined) return bad(`resource ${resource} is not served by this server for OAuth sign-in`);
    if ('refused' in offer)
      return void res.status(403).json({ error: 'access_denied', error_description: offer.refused });
    const { scopes } = offer;
    if (scopes.length === 0) return bad(`the role ${session.principal.role} allows none of the requested scopes`);
    return {
      sessionId: session.sessionId,
      clientId: client.client_id,
      clientName: clientNameOf(client),
      redirectUri,
      codeChallenge: challenge,
      state: str(p.state),
      scopes,
      resource,
      consentKey: consentKeyOf(resource, offer.resource),
    };
  };

  router.get('/authorize', async (req, res, next) => {
    try {
      const pending = await check(req, res, req.query);
      const session = pageSessionOf(res);
      if (pending === undefined || session === undefined) return;
      res.setHeader('Cache-Control', 'no-store');
      res.json({
        client: { clientId: pending.clientId, clientName: pending.clientName, scope: scopeString(pending.scopes) },
        user: { id: session.userId, username: session.username },
        params: {
          clientId: pending.clientId,
          redirectUri: pending.redirectUri,
          codeChallenge: pending.codeChallenge,
          codeChallengeMethod: 'S256',
          state: pending.state,
          scope: scopeString(pending.scopes),
          resource: pending.resource,
        },
      });
    } catch (err) {
      next(err);
    }
  });

  router.post('/authorize', async (req, res, next) => {
    try {
      const session = pageSessionOf(res);
      if (session !== undefined && req.get('x-csrf-token') !== session.csrfToken) {
        return void res
          .status(403)
          .json({ code: 'unauthorized', message: 'X-CSRF-Token is missing or wrong.', field: 'csrf' });
      }
      const body = formOf(req.body);
      const pending = await check(req, res, body);
      if (pending === undefined || session === undefined) return;
      res.setHeader('Cache-Control', 'no-store');
      if (body.action === 'allow') res.json({ ok: true, redirectUrl: await consent.allow(pending, session.userId) });
      else res.json({ ok: false, redirectUrl: consent.denyUrl(pending) });
    } catch (err) {
      next(err);
    }
  });
  return router;
}
