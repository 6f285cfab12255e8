import express, { type Request, type Response, type Router } from 'express';
import type { Grant } from '../oauth/grant.repository';
import type { OAuthServer } from '../oauth/oauth-server';
import type { BrowserSession } from '../auth/browser-sessions';
import { formOf, pageSessionOf, type RenderPage } from './oauth-consent';

/** One entry of `GET /api/mcp/authorizations` (the reference design's fields plus `userId`, `username`, `lastUsedAt`). */
export function authorizationEntry(grant: Grant): Record<string, unknown> {
  return {
    clientId: grant.clientId,
    clientName: grant.clientName,
    scope: grant.scope,
    clientCreatedAt: grant.clientCreatedAt,
    authorizedAt: grant.createdAt,
    tokenCount: grant.tokenCount,
    userId: grant.userId,
    username: grant.username,
    lastUsedAt: grant.lastUsedAt,
  };
}

/**
 * Whose authorizations a request may see: a person sees their
 * own; an admin may ask for `?user=all` or `?user=<id>`.
 *
 * @returns the user id to filter on, undefined for everyone, or null when refused
 */
function scopeOf(session: BrowserSession, asked: unknown): string | undefined | null {
  if (asked === undefined || asked === '' || asked === session.userId) return session.userId;
  if (session.principal.role !== 'admin') return null;
  return asked === 'all' ? undefined : typeof asked === 'string' ? asked : null;
}

/**
 * The authorizations page `…/oauth/authorizations` (for people: a table of the
 * clients they authorized, each with a Revoke button posting a CSRF-checked
 * form) and its JSON twin `GET /api/mcp/authorizations`, `DELETE
 * /api/mcp/authorizations/:clientId` (the browser session with
 * `X-CSRF-Token` on DELETE). Revoking ends the grant's refresh tokens at once
 * and its access tokens on every replica within `OAUTH_REVOCATION_CHECK_MS`.
 */
export function authorizationRoutes(deps: { server: OAuthServer; basePath: string; render: RenderPage }): {
  page: Router;
  api: Router;
} {
  const { server, basePath, render } = deps;
  const page = express.Router();
  page.get('/authorizations', async (req: Request, res: Response, next) => {
    try {
      const session = pageSessionOf(res);
      if (session === undefined) {
        res.redirect(303, `${basePath}/signin?next=${encodeURIComponent(`${basePath}/oauth/authorizations`)}`);
        return;
      }
      const who = scopeOf(session, req.query.user);
      if (who === null) {
        render(
          res,
          'oauth-error',
          { title: 'Not allowed', message: "Only admins see other people's authorizations.", basePath: basePath },
          { status: 403 },
        );
        return;
      }
      const grants = await server.grants.list(who);
      res.setHeader('Cache-Control', 'no-store');
      render(res, 'authorizations', {
        title: 'Authorized applications',
        basePath,
        username: session.username,
        isAdmin: session.principal.role === 'admin',
        showUser: who !== session.userId,
        grants: grants.map((g) => ({
          ...authorizationEntry(g),
          scopes: g.scope.split(' '),
          authorizedAt: readableTime(g.createdAt),
          lastUsedAt: g.lastUsedAt === null ? null : readableTime(g.lastUsedAt),
        })),
        empty: grants.length === 0,
        csrfToken: session.csrfToken,
        action: `${basePath}/oauth/authorizations/revoke`,
        userFilter: typeof req.query.user === 'string' ? req.query.user : '',
      });
    } catch (err) {
      next(err);
    }
  });
  page.post('/authorizations/revoke', express.urlencoded({ extended: false }), async (req, res, next) => {
    try {
      const session = pageSessionOf(res);
      const form = formOf(req.body);
      if (session === undefined) {
        res.redirect(303, `${basePath}/signin?next=${encodeURIComponent(`${basePath}/oauth/authorizations`)}`);
        return;
      }
      if (typeof form.csrf !== 'string' || form.csrf !== session.csrfToken) {
        render(
          res,
          'oauth-error',
          {
            title: 'Request refused',
            message: 'The form was not sent from this page (CSRF check failed).',
            basePath: basePath,
          },
          { status: 403 },
        );
        return;
      }
      const who = scopeOf(session, form.user);
      if (who === null || typeof form.clientId !== 'string') {
        render(
          res,
          'oauth-error',
          { title: 'Not allowed', message: 'You may revoke only your own authorizations.', basePath: basePath },
          { status: 403 },
        );
        return;
      }
      await server.provider.revokeAuthorization(form.clientId, who);
      const back =
        typeof form.filter === 'string' && form.filter !== '' ? `?user=${encodeURIComponent(form.filter)}` : '';
      res.redirect(303, `${basePath}/oauth/authorizations${back}`);
    } catch (err) {
      next(err);
    }
  });

  const api = express.Router();
  api.get('/authorizations', async (req, res, next) => {
    try {
      const session = pageSessionOf(res);
      if (session === undefined)
        return void res.status(401).json({ code: 'unauthenticated', message: 'Sign in first.' });
      const who = scopeOf(session, req.query.user);
      if (who === null)
        return void res
          .status(403)
          .json({ code: 'permission_denied', message: "Only admins see other people's authorizations." });
      res.setHeader('Cache-Control', 'no-store');
      res.json({ authorizations: (await server.grants.list(who)).map(authorizationEntry) });
    } catch (err) {
      next(err);
    }
  });
  api.delete('/authorizations/:clientId', async (req, res, next) => {
    try {
      const session = pageSessionOf(res);
      if (session === undefined)
        return void res.status(401).json({ code: 'unauthenticated', message: 'Sign in first.' });
      if (req.get('x-csrf-token') !== session.csrfToken) {
        return void res
          .status(403)
          .json({ code: 'unauthorized', message: 'X-CSRF-Token is missing or wrong.', field: 'csrf' });
      }
      const who = scopeOf(session, req.query.user);
      if (who === null)
        return void res
          .status(403)
          .json({ code: 'permission_denied', message: 'You may revoke only your own authorizations.' });
      const revoked = await server.provider.revokeAuthorization(String(req.params.clientId), who);
      if (revoked === 0)
        return void res.status(404).json({ code: 'resource_not_found', message: 'No such authorization.' });
      res.json({ ok: true, message: 'Authorizations revoked' });
    } catch (err) {
      next(err);
    }
  });
  return { page, api };
}

/** `2026-12-01T20:54:52.811Z` → `2026-12-01 20:54 UTC` (the page; the JSON keeps ISO 8601). */
function readableTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
