import type { NextFunction, Request, Response } from 'express';
import { DaguError, type Principal } from '@dagu-mcp/contracts';
import type { Surface } from '../auth/api-key.repository';
import { TooManyFailures, type Authenticator } from '../auth/authenticator';
import { takeCredential } from '../auth/credentials';
import type { BrowserSessions } from '../auth/browser-sessions';
import { safeEqual } from '../auth/authenticator';
import { CSRF_HEADER } from './browser-rules';
import { sessionCookieOf } from './pages/signin.page';
import type { AuditLog } from '../audit/audit-log';
import { requestIdOf } from './request-id';
import { setBrowserSession } from './principal';

/**
 * Authenticates the request before any MCP or REST handling (020
 * §Authentication, §API-Key Surface): reads the credential (header, else
 * `?token=`, which is stripped from the URL), resolves the principal, and
 * refuses an API key whose surfaces do not include `surface`. Failures are
 * answered here: 401 `unauthenticated` with `WWW-Authenticate` per enabled
 * scheme, 403 `invalid_api_key_surface`, 429 with `Retry-After`.
 *
 * With `browserSessions` (REST only, builtin mode), a request that carries no other
 * credential may authenticate with the `dagu_session` cookie (credential type `session`);
 * a state-changing one must then carry `X-CSRF-Token` equal to the session's token, else
 * 403 `unauthorized` on field `csrf` (docs/security.md "Browser sessions").
 *
 * On success: `res.locals.principal` and, for the MCP SDK, `req.auth`; for a session also
 * the session (`browserSessionOf(res)`).
 *
 * `oauth` (MCP endpoints with the built-in authorization server):
 * `resourceOf` names the resource the request addresses (OAuth access tokens
 * are accepted only where it does; their principal carries the scopes they hold), `challenge`
 * the Bearer challenge with `resource_metadata` and `scope` sent first on a 401.
 */
export function authenticate(deps: {
  authenticator: Authenticator;
  surface: Surface;
  audit: AuditLog;
  oauth?: { resourceOf(req: Request): string | undefined; challenge(req: Request): string | undefined };
  browserSessions?: BrowserSessions;
}) {
  return async function authenticate(req: Request, res: Response, next: NextFunction): Promise<void> {
    const credential = takeCredential(req);
    try {
      if (credential === undefined && deps.browserSessions !== undefined) {
        const cookieValue = sessionCookieOf(req);
        const session = cookieValue === undefined ? undefined : await deps.browserSessions.resolve(cookieValue);
        if (session !== undefined) {
          const sent = req.header(CSRF_HEADER) ?? '';
          if (STATE_CHANGING.has(req.method) && !safeEqual(sent, session.csrfToken)) {
            const error = new DaguError(
              'unauthorized',
              "A state-changing request signed in by a browser session must carry the session's X-CSRF-Token.",
              { field: 'csrf' },
            );
            deny(res, 403, error, deps, req, session.principal);
            return;
          }
          res.locals.principal = session.principal;
          setBrowserSession(res, session);
          next();
          return;
        }
      }
      const resource = deps.oauth?.resourceOf(req);
      const result = await deps.authenticator.authenticate(credential, req.ip ?? 'unknown', resource);
      if (result.surfaces !== undefined && !result.surfaces.includes(deps.surface)) {
        deny(
          res,
          403,
          new DaguError('invalid_api_key_surface', `This API key is not accepted on the ${deps.surface} surface.`),
          deps,
          req,
          result.principal,
        );
        return;
      }
      res.locals.principal = result.principal;
      if (result.loginToken !== undefined) res.locals.loginToken = result.loginToken;
      (req as Request & { auth?: unknown }).auth = {
        token: '',
        clientId: result.principal.id,
        scopes: result.scopes ?? [],
        extra: { principal: result.principal },
      };
      next();
    } catch (err) {
      if (err instanceof TooManyFailures) {
        res.setHeader('Retry-After', String(err.retryAfterSeconds));
        deny(
          res,
          429,
          new DaguError('rate_limited', 'Too many failed attempts; try again later.'),
          deps,
          req,
          undefined,
        );
        return;
      }
      if (err instanceof DaguError && err.code === 'unauthenticated') {
        const bearer = deps.oauth?.challenge(req);
        const own = withoutBasicForPageFetch(req, deps.authenticator.challenges());
        const challenges = bearer === undefined ? own : [bearer, ...own.filter((c) => !c.startsWith('Bearer '))];
        if (challenges.length > 0) res.setHeader('WWW-Authenticate', challenges);
        deny(res, 401, err, deps, req, undefined);
        return;
      }
      next(err);
    }
  };
}

const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function deny(
  res: Response,
  status: number,
  error: DaguError,
  deps: { surface: Surface; audit: AuditLog },
  req: Request,
  principal: Principal | undefined,
): void {
  deps.audit.record({
    category: deps.surface === 'mcp' ? 'mcp' : 'rest',
    action: deps.surface === 'mcp' ? 'mcp.request.denied' : 'rest.request.denied',
    principal,
    target: `${req.method} ${req.baseUrl}${req.path}`,
    outcome: 'denied',
    requestId: requestIdOf(res),
    details: { code: error.code, status },
  });
  res
    .status(status)
    .json({ code: error.code, message: error.message, ...(error.field !== undefined ? { field: error.field } : {}) });
}

/**
 * A request a page makes from script (the web console: a browser marks its fetch and
 * EventSource requests `Sec-Fetch-Dest: empty`) gets no `Basic` challenge: on a 401 with one, a
 * browser opens its own password dialog (headless browsers wait on it forever) instead of
 * letting the page send the person to the sign-in page. Scripts outside a browser (Node's
 * fetch sends no `Sec-Fetch-Dest`) and navigations keep every challenge.
 */
function withoutBasicForPageFetch(req: Request, challenges: string[]): string[] {
  if (req.header('sec-fetch-dest') !== 'empty') return challenges;
  return challenges.filter((c) => !/^basic\b/i.test(c));
}
