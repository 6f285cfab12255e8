import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';
import type { AuditLog } from '../audit/audit-log';
import type { FailureLimiter } from '../auth/failure-limiter';
import type { LoginTokens } from '../auth/login-token';
import type { LoginSessions } from '../auth/login-sessions';
import { verifyUserPassword } from '../auth/password';
import type { UserRepository } from '../auth/user.repository';
import { attemptPassword, TooManyFailures, type AuthMode } from '../auth/authenticator';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';
import { requestIdOf } from '../http/request-id';

const LoginSchema = z.strictObject({ username: z.string().min(1).max(200), password: z.string().min(1).max(1000) });

/**
 * `POST /api/v1/auth/login` (public; builtin mode) → `{token, expiresAt, user: {id, username, role}}`;
 * `POST /api/v1/auth/logout` → 204, ends the login token it is called with on
 * every replica; `GET /api/v1/auth/me` → the caller's principal. Failed
 * logins count towards the username-and-address and address limits (429 with
 * `Retry-After`) and slow the username (docs/security.md "Role boundaries" 4, 5).
 */
export function authRoutes(deps: {
  mode: AuthMode;
  users: UserRepository;
  tokens: LoginTokens;
  sessions: LoginSessions;
  limiter: FailureLimiter;
  audit: AuditLog;
}): RestRoutes {
  return (routes) => {
    routes.post(
      '/auth/login',
      { action: 'auth.login', summary: 'Log in (builtin mode); returns a login token', tag: 'auth', body: LoginSchema },
      async (req, res) => {
        if (deps.mode !== 'builtin')
          throw new DaguError('resource_not_found', 'Login is only available with AUTH_MODE=builtin.');
        const { username, password } = parseRequest(LoginSchema, req.body);
        // req.ip honours X-Forwarded-For only through the TRUST_PROXY hops (app.ts).
        const address = req.ip ?? 'unknown';
        let found: Awaited<ReturnType<UserRepository['findByUsername']>>;
        try {
          found = await attemptPassword(deps.limiter, address, username, async () => {
            const user = await deps.users.findByUsername(username);
            return (await verifyUserPassword(user?.passwordHash, password)) ? user : undefined;
          });
        } catch (err) {
          if (!(err instanceof TooManyFailures)) throw err;
          res.setHeader('Retry-After', String(err.retryAfterSeconds));
          throw new DaguError('rate_limited', 'Too many failed attempts; try again later.');
        }
        if (found === undefined) {
          deps.audit.record({
            category: 'auth',
            action: 'auth.login.failed',
            principal: undefined,
            target: username,
            outcome: 'failed',
            requestId: requestIdOf(res),
          });
          throw new DaguError('unauthenticated', 'Wrong username or password.');
        }
        const { user } = found;
        const issued = await deps.tokens.issue({
          userId: user.id,
          username: user.username,
          role: user.role,
          tokenVersion: found.tokenVersion,
        });
        deps.audit.record({
          category: 'auth',
          action: 'auth.login.succeeded',
          principal: { id: `user:${user.id}`, subject: user.username, role: user.role, credentialType: 'basic' },
          target: username,
          outcome: 'succeeded',
          requestId: requestIdOf(res),
        });
        res.json({
          token: issued.token,
          expiresAt: issued.expiresAt,
          user: { id: user.id, username: user.username, role: user.role },
        });
      },
    );

    routes.post(
      '/auth/logout',
      { action: 'auth.logout', summary: 'End the login token of this request (on every replica)', tag: 'auth' },
      async (_req, res) => {
        const token = loginTokenOf(res.locals.loginToken);
        if (token === undefined) {
          throw new DaguError(
            'invalid_request',
            'Logout ends a login token; this request was not made with one (API keys are revoked under /api-keys).',
          );
        }
        await deps.sessions.logOut(token.tokenId, token.expiresAt);
        deps.audit.record({
          category: 'auth',
          action: 'auth.logout',
          principal: principalOf(res),
          target: principalOf(res).subject,
          outcome: 'succeeded',
          requestId: requestIdOf(res),
        });
        res.status(204).end();
      },
    );

    routes.get('/auth/me', { action: 'auth.me', summary: 'The authenticated caller', tag: 'auth' }, (_req, res) => {
      const p = principalOf(res);
      res.json({ id: p.id, subject: p.subject, role: p.role, credentialType: p.credentialType });
    });
  };
}

/** The login token `authenticate()` left in `res.locals.loginToken`, if the request used one. */
function loginTokenOf(value: unknown): { tokenId: string; expiresAt: number } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const tokenId: unknown = Reflect.get(value, 'tokenId');
  const expiresAt: unknown = Reflect.get(value, 'expiresAt');
  return typeof tokenId === 'string' && typeof expiresAt === 'number' ? { tokenId, expiresAt } : undefined;
}
