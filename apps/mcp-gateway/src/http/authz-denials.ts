import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { PrincipalSchema, type Principal } from '@dagu-mcp/contracts';
import type { AuditEvent } from '../audit/audit-log';
import { requestIdOf } from './request-id';

/**
 * `authz.denied` audit rows: who was refused, the role the action needs and the action
 * attempted. The needed role is read from the refusal's message, which every
 * role check writes as "… needs the <role> role or higher" (dagu-model §9).
 */
export function authzDeniedEvent(opts: {
  principal: Principal;
  attempted: string;
  message: string;
  surface: 'mcp' | 'rest';
  requestId?: string | undefined;
}): AuditEvent {
  const needed = /needs the (\w+) role/.exec(opts.message)?.[1];
  return {
    category: 'authz',
    action: 'authz.denied',
    principal: opts.principal,
    target: opts.attempted.slice(0, 500),
    outcome: 'denied',
    ...(opts.requestId !== undefined ? { requestId: opts.requestId } : {}),
    details: {
      surface: opts.surface,
      role: opts.principal.role,
      ...(needed !== undefined ? { neededRole: needed } : {}),
    },
  };
}

/** Where {@link sendRestError} leaves the code and message of the error it answered. */
export const REST_ERROR_LOCAL = 'restError';

/**
 * REST middleware: once a response finished as a role refusal (`unauthorized`)
 * of an authenticated caller, records `authz.denied` with the method and
 * route path attempted.
 */
export function auditRestDenials(audit: (event: AuditEvent) => void): RequestHandler {
  return function auditRestDenials(req: Request, res: Response, next: NextFunction): void {
    res.on('finish', () => {
      const error: unknown = res.locals[REST_ERROR_LOCAL];
      const principal = PrincipalSchema.safeParse(res.locals.principal);
      if (!principal.success || typeof error !== 'object' || error === null) return;
      const { code, message } = error as { code?: unknown; message?: unknown };
      if (code !== 'unauthorized') return;
      audit(
        authzDeniedEvent({
          principal: principal.data,
          attempted: `${req.method} ${req.baseUrl}${req.path}`,
          message: typeof message === 'string' ? message : '',
          surface: 'rest',
          requestId: requestIdOf(res),
        }),
      );
    });
    next();
  };
}
