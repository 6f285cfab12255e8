import { DaguError } from '@dagu-mcp/contracts';
import { browserSessionOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';

/**
 * `GET /api/v1/session` → `{user: {id, username, role}, csrfToken, expiresAt}` for a caller
 * signed in by the `dagu_session` cookie (docs/security.md "Browser sessions"): a page
 * reads its CSRF token here and sends it as `X-CSRF-Token` on state-changing requests.
 * Any other credential → 401 `unauthenticated` (it has no browser session).
 */
export function sessionRoutes(): RestRoutes {
  return (routes) => {
    routes.get(
      '/session',
      {
        action: 'session.list',
        summary: 'The browser session of the caller (cookie sign-in) and its CSRF token',
        tag: 'auth',
      },
      (_req, res) => {
        const session = browserSessionOf(res);
        if (session === undefined)
          throw new DaguError('unauthenticated', 'No browser session: sign in at /signin first.');
        res.json({
          user: { id: session.userId, username: session.username, role: session.principal.role },
          csrfToken: session.csrfToken,
          expiresAt: new Date(session.expiresAt).toISOString(),
        });
      },
    );
  };
}
