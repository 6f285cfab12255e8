import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';
import type { AuditLog } from '../audit/audit-log';
import type { FailureLimiter } from '../auth/failure-limiter';
import type { LoginTokens } from '../auth/login-token';
import { verifyUserPassword } from '../auth/password';
import type { UserRepository } from '../auth/user.repository';
import type { AuthMode } from '../auth/authenticator';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';
import { requestIdOf } from '../http/request-id';

const LoginSchema = z.strictObject({ username: z.string().min(1).max(200), password: z.string().min(1).max(1000) });

/**
 * `POST /api/v1/auth/login` (public; builtin mode) → `{token, expiresAt, user: {id, username, role}}`;
 * `GET /api/v1/auth/me` → the caller's principal. Failed logins count towards
 * the per-username and per-address limits (429 with `Retry-After`).
 */
export function authRoutes(deps: {
  mode: AuthMode;
  users: UserRepository;
  tokens: LoginTokens;
  limiter: FailureLimiter;
  audit: AuditLog;
}): RestRoutes {
  return (routes) => {
    routes.post(
      '/auth/login',
      { access: 'public', summary: 'Log in (builtin mode); returns a login token', tag: 'auth', body: LoginSchema },
      async (req, res) => {
        if (deps.mode !== 'builtin')
          throw new DaguError('resource_not_found', 'Login is only available with AUTH_MODE=builtin.');
        const { username, password } = parseRequest(LoginSchema, req.body);
        const address = req.ip ?? 'unknown';
        const blocked = await deps.limiter.check(address, username);
        if (blocked !== undefined) {
          res.setHeader('Retry-After', String(blocked.retryAfterSeconds));
          throw new DaguError('rate_limited', 'Too many failed attempts; try again later.');
        }
        const found = await deps.users.findByUsername(username);
        const ok = await verifyUserPassword(found?.passwordHash, password);
        if (!ok || found === undefined) {
          await deps.limiter.recordFailure(address, username);
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
        await deps.limiter.recordSuccess(username);
        const { user } = found;
        const issued = await deps.tokens.issue({ userId: user.id, username: user.username, role: user.role });
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

    routes.get('/auth/me', { access: 'viewer', summary: 'The authenticated caller', tag: 'auth' }, (_req, res) => {
      const p = principalOf(res);
      res.json({ id: p.id, subject: p.subject, role: p.role, credentialType: p.credentialType });
    });
  };
}
