import { randomBytes } from 'node:crypto';
import express, { Router, type ErrorRequestHandler, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '@dagu-mcp/runtime';
import { outageErrorOf } from '../dependency-outage';
import { parse as parseCookies } from 'cookie';
import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';
import type { AuditLog } from '../../audit/audit-log';
import { safeEqual, TooManyFailures } from '../../auth/authenticator';
import { SESSION_COOKIE, type BrowserSessions } from '../../auth/browser-sessions';
import { requestIdOf } from '../request-id';
import { PAGES_CSS } from './pages-css';
import { pageCspWithFormTarget, pageTemplate, renderPage } from './render';

const FormFieldsSchema = z.record(z.string(), z.unknown());

/** Cookie of the sign-in form's CSRF token (double submit: the form field must equal it). */
const FORM_CSRF_COOKIE = 'dagu_form_csrf';

const signInBody = pageTemplate(`<h1>Sign in</h1>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
{{#if purpose}}<p class="muted">{{purpose}}</p>{{/if}}
<form method="post" action="{{basePath}}/signin">
<input type="hidden" name="csrf" value="{{csrf}}">
<input type="hidden" name="next" value="{{next}}">
<label for="username">Username</label>
<input type="text" id="username" name="username" value="{{username}}" autocomplete="username" required{{#unless username}} autofocus{{/unless}}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required{{#if username}} autofocus{{/if}}>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`);

/** Options of {@link signInPages}. */
export interface SignInPagesDeps {
  readonly sessions: BrowserSessions;
  readonly audit: AuditLog;
  /** `BASE_PATH` ('' or `/dagu`): links and redirects are under it. */
  readonly basePath: string;
  /** Session lifetime, ms: the cookie's Max-Age. */
  readonly ttlMs: number;
  readonly logger: Logger;
  /**
   * The one off-origin target the form's answer may redirect to for this `next`, as a CSP
   * source (the OAuth wiring's: a pending authorization's validated redirect URI), or undefined. Absent: the page's `form-action` stays `'self'`.
   */
  readonly formTargetOf?: (next: string) => Promise<string | undefined>;
}

/**
 * The sign-in pages (docs/security.md "Browser sessions"), mounted at the root and under
 * `BASE_PATH`:
 * - `GET /signin?next=<path>` — the form (its CSP `form-action` also names the target
 *   `formTargetOf` gives for `next`);
 * - `POST /signin` (form: `username`, `password`, `csrf`, `next`) — on success sets the
 *   `dagu_session` cookie (`HttpOnly`, `SameSite=Lax`, `Secure` when the request came over
 *   TLS) and answers 303 to `next` (a path on this origin only; default `<BASE_PATH>/`);
 *   a wrong password re-renders the form (401), the brute-force limits answer 429 with
 *   `Retry-After`, a missing or wrong CSRF token 403;
 * - `POST /signout` (form: `csrf` = the session's token) — ends the session, 303 to the form;
 * - `GET /assets/pages.css` — the pages' stylesheet.
 */
export function signInPages(deps: SignInPagesDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

  router.get('/assets/pages.css', (_req, res) => {
    res.type('text/css').setHeader('Cache-Control', 'public, max-age=3600').send(PAGES_CSS);
  });

  router.get('/signin', async (req, res) => {
    const next = safeNext(req.query.next, deps.basePath);
    await showForm(req, res, deps, { next, status: 200 });
  });

  router.post('/signin', form, async (req: Request, res: Response) => {
    const body = formFields(req);
    const next = safeNext(body.next, deps.basePath);
    const username = typeof body.username === 'string' ? body.username.slice(0, 200) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, 1000) : '';
    if (!formCsrfMatches(req, body.csrf)) {
      await showForm(req, res, deps, {
        next,
        username,
        status: 403,
        error: 'The form expired or came from another site. Please sign in again.',
      });
      return;
    }
    try {
      const { cookieValue, session } = await deps.sessions.signIn(username, password, req.ip ?? 'unknown');
      deps.audit.record({
        category: 'auth',
        action: 'auth.signin.succeeded',
        principal: session.principal,
        target: username,
        outcome: 'succeeded',
        requestId: requestIdOf(res),
      });
      res.cookie(SESSION_COOKIE, cookieValue, {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: '/',
        maxAge: deps.ttlMs,
      });
      res.clearCookie(FORM_CSRF_COOKIE, { path: '/' });
      res.redirect(303, next);
    } catch (err) {
      if (err instanceof TooManyFailures) {
        res.setHeader('Retry-After', String(err.retryAfterSeconds));
        await showForm(req, res, deps, {
          next,
          username,
          status: 429,
          error: `Too many failed attempts. Try again in ${err.retryAfterSeconds} seconds.`,
        });
        return;
      }
      if (err instanceof DaguError && err.code === 'unauthenticated') {
        deps.audit.record({
          category: 'auth',
          action: 'auth.signin.failed',
          principal: undefined,
          target: username,
          outcome: 'failed',
          requestId: requestIdOf(res),
        });
        await showForm(req, res, deps, { next, username, status: 401, error: 'Wrong username or password.' });
        return;
      }
      throw err;
    }
  });

  router.post('/signout', form, async (req: Request, res: Response) => {
    const cookieValue = sessionCookieOf(req);
    const session = cookieValue === undefined ? undefined : await deps.sessions.resolve(cookieValue);
    const csrf = formFields(req).csrf;
    if (session !== undefined && cookieValue !== undefined) {
      if (typeof csrf !== 'string' || !safeEqual(csrf, session.csrfToken)) {
        res.status(403).json({ code: 'unauthorized', message: 'Sign-out needs the session CSRF token.' });
        return;
      }
      await deps.sessions.signOut(cookieValue);
      deps.audit.record({
        category: 'auth',
        action: 'auth.signout',
        principal: session.principal,
        target: session.username,
        outcome: 'succeeded',
        requestId: requestIdOf(res),
      });
    }
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.redirect(303, `${deps.basePath}/signin`);
  });
  router.use(pageErrors(deps));
  return router;
}

const errorBody = pageTemplate(`<h1>{{heading}}</h1>
<p>{{message}}</p>
<p class="muted">Request id: <code>{{requestId}}</code></p>`);

/**
 * Failures of a page as a page: a Redis or PostgreSQL outage is 503 with `Retry-After`
 * ("try again"), anything else 500, logged once here with the request id; never a stack.
 */
function pageErrors(deps: SignInPagesDeps): ErrorRequestHandler {
  return function pageErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(err);
    const outage = outageErrorOf(err);
    if (outage === undefined) deps.logger.error({ err, requestId: requestIdOf(res) }, 'page failed');
    if (outage !== undefined) res.setHeader('Retry-After', '5');
    renderPage(
      res,
      errorBody,
      {
        title: 'Unavailable',
        basePath: deps.basePath,
        heading: outage !== undefined ? 'Temporarily unavailable' : 'Something went wrong',
        message:
          outage !== undefined
            ? 'A service the sign-in needs is not answering. Try again in a few seconds.'
            : 'The page could not be shown.',
        requestId: requestIdOf(res),
      },
      { status: outage !== undefined ? 503 : 500 },
    );
  };
}

/** The `dagu_session` cookie of a request, if any. */
export function sessionCookieOf(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined || header === '') return undefined;
  const value = parseCookies(header)[SESSION_COOKIE];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A redirect target after sign-in: a path on this origin (`/…`, not `//host` or `/\host`),
 * at most 2,000 characters; anything else becomes `<basePath>/`.
 */
export function safeNext(value: unknown, basePath: string): string {
  if (typeof value !== 'string' || value.length > 2000) return `${basePath}/`;
  if (!/^\/(?![/\\])/.test(value) || /[\r\n]/.test(value)) return `${basePath}/`;
  return value;
}

/** The parsed form fields of a request (empty when the body was not a form). */
function formFields(req: Request): Record<string, unknown> {
  const parsed = FormFieldsSchema.safeParse(req.body);
  return parsed.success ? parsed.data : {};
}

function formCsrfMatches(req: Request, field: unknown): boolean {
  const cookie = parseCookies(req.headers.cookie ?? '')[FORM_CSRF_COOKIE];
  return typeof field === 'string' && field !== '' && cookie !== undefined && safeEqual(field, cookie);
}

/**
 * Renders the form. Its CSP `form-action` also names the target `deps.formTargetOf` gives
 * for `next`: after a successful post the browser follows 303 to `next`, and when that is
 * the authorize step of a remembered consent, a 302 on to the client, which CSP checks
 * against this page's `form-action`. Every rendering (the first, and the
 * form shown again after a failure) carries it, since each can be posted.
 */
async function showForm(
  req: Request,
  res: Response,
  deps: SignInPagesDeps,
  view: { next: string; status: number; username?: string; error?: string },
): Promise<void> {
  const formTarget = deps.formTargetOf === undefined ? undefined : await deps.formTargetOf(view.next);
  const csrf = randomBytes(24).toString('base64url');
  res.cookie(FORM_CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/' });
  renderPage(
    res,
    signInBody,
    {
      title: 'Sign in',
      basePath: deps.basePath,
      csrf,
      next: view.next,
      username: view.username ?? '',
      error: view.error,
      purpose: view.next.includes('/oauth/') ? 'Sign in to authorize an application.' : undefined,
    },
    { status: view.status, csp: pageCspWithFormTarget(formTarget) },
  );
}
