import type { Request, Response } from 'express';
import { decodeJwt } from 'jose';
import { formOf } from './oauth-consent';
import type { OAuthServer } from '../oauth/oauth-server';

/**
 * Token introspection (RFC 7662) for the client that holds the token: an access
 * token reports its claims and live scopes; anything else, a token of another
 * client, a revoked or expired one, reports `{active: false}`. Refresh tokens
 * are not introspected (they are opaque to resource servers).
 */
export function introspect(server: OAuthServer) {
  return async function introspect(req: Request, res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    const token = formOf(req.body).token;
    const client = (req as Request & { client?: { client_id: string } }).client;
    if (typeof token !== 'string' || token === '') {
      res.status(400).json({ error: 'invalid_request', error_description: 'token is required' });
      return;
    }
    const verified = await server.provider.verifyAccess(token, undefined);
    if (verified === undefined || verified.clientId !== client?.client_id) {
      res.json({ active: false });
      return;
    }
    const claims = decodeJwt(token);
    res.json({
      active: true,
      scope: verified.scopes.join(' '),
      client_id: verified.clientId,
      username: verified.principal.subject,
      sub: claims.sub,
      aud: claims.aud,
      iss: claims.iss,
      exp: claims.exp,
      iat: claims.iat,
      jti: claims.jti,
      token_type: 'Bearer',
    });
  };
}
