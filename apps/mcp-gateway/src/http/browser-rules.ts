import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { DaguError } from '@dagu-mcp/contracts';
import { principalOf } from './principal';
import { sendRestError } from './rest-errors';

/**
 * Browser rules of the REST API (docs/security.md "Bounds and browser rules"): what keeps a page on another
 * site from acting through a developer's browser.
 */

/** Methods that change something; GET, HEAD and OPTIONS never do. */
const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The body types an HTML form (or a fetch without a CORS preflight) can send. */
const FORM_TYPES: ReadonlySet<string> = new Set([
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
]);

/** The header a cross-site form cannot send; with it, any body type is accepted. */
export const CSRF_HEADER = 'x-csrf-token';

/**
 * Headers on every gateway answer: `X-Content-Type-Options: nosniff` (no
 * answer is read as another type than it says) and a Content-Security-Policy
 * that loads nothing and may be framed by nobody, so an HTML answer (none is
 * served today; a proxy or an error page might) can neither run nor be framed.
 */
export function securityHeaders(): RequestHandler {
  return function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    next();
  };
}

/**
 * `Cache-Control: no-store` on every answer of the router: a REST answer
 * depends on the caller's credential, and some carry one (the login token, a
 * new API key), so no cache may keep any.
 */
export function noStore(): RequestHandler {
  return function noStore(_req: Request, res: Response, next: NextFunction): void {
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
}

/**
 * Refuses a state-changing request whose `Origin` is neither the gateway's own
 * origin (`<protocol>://<Host>`) nor one of `allowedOrigins`
 * (`ALLOWED_ORIGINS`). Requests without `Origin` (non-browser clients) pass.
 * Runs before authentication, so a foreign page learns nothing about the
 * credential its request carried.
 *
 * Answers 403 `unauthorized` on field `origin`.
 */
export function foreignOriginGuard(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins.map(originOf));
  return function foreignOriginGuard(req: Request, res: Response, next: NextFunction): void {
    const origin = req.headers.origin;
    if (!STATE_CHANGING.has(req.method) || origin === undefined) return next();
    const own = originOf(`${req.protocol}://${req.headers.host ?? ''}`);
    const candidate = originOf(origin);
    if (candidate === own || allowed.has(candidate)) return next();
    sendRestError(
      res,
      new DaguError('unauthorized', `A state-changing request from origin ${origin} is refused.`, { field: 'origin' }),
    );
  };
}

/** Options of {@link browserCredentialRule}. */
export interface BrowserCredentialRuleOptions {
  /**
   * The route documents a `text/plain` body (the wiki page `PUT`). Honoured
   * for PUT, PATCH and DELETE only: a browser sends those cross-site only
   * after a CORS preflight, which the gateway never grants.
   */
  readonly textBody?: boolean;
}

/**
 * A state-changing request authenticated by a credential a browser attaches
 * by itself — Basic, or none at all with `AUTH_MODE=none` — must also carry
 * something a cross-site form cannot send: a body type that is not a form
 * type (`application/json`, `application/yaml`, …) or an `X-CSRF-Token`
 * header. A request with a Bearer credential is never affected. Runs after
 * authentication.
 *
 * Answers 403 `unauthorized` on field `content-type`.
 */
export function browserCredentialRule(options: BrowserCredentialRuleOptions = {}): RequestHandler {
  return function browserCredentialRule(req: Request, res: Response, next: NextFunction): void {
    if (!STATE_CHANGING.has(req.method)) return next();
    if (/^bearer\s/i.test(req.headers.authorization ?? '')) return next();
    const credential = principalOf(res).credentialType;
    if (credential !== 'basic' && credential !== 'none') return next();
    if ((req.header(CSRF_HEADER) ?? '').trim() !== '') return next();
    const media = mediaTypeOf(req);
    if (media !== '' && !FORM_TYPES.has(media)) return next();
    if (media === 'text/plain' && options.textBody === true && req.method !== 'POST') return next();
    next(
      new DaguError(
        'unauthorized',
        'A state-changing request authenticated by Basic or with authentication off must have a body type ' +
          'a form cannot send (such as application/json) or an X-CSRF-Token header.',
        { field: 'content-type' },
      ),
    );
  };
}

/** `Text/Plain; charset=utf-8` → `text/plain`; `''` when there is no `Content-Type`. */
function mediaTypeOf(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** `HTTPS://Example.com:443/` → `https://example.com`; unparsable values (`null`) are compared as given. */
function originOf(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin.trim().toLowerCase();
  }
}
