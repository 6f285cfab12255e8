import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id: the caller's `X-Request-Id` when it is a short
 * safe token, else a new UUID. Echoed in the `X-Request-Id` response header
 * and kept in `res.locals.requestId` for logs and error bodies.
 */
export function requestId() {
  return function requestId(req: Request, res: Response, next: NextFunction): void {
    const given = req.header('x-request-id');
    const id = given !== undefined && SAFE_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

/**
 * The id the `requestId` middleware gave this request, read back from
 * `res.locals` (Express types locals as `any`, so the check is ours);
 * `undefined` when the middleware did not run (a test app without it).
 */
export function requestIdOf(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === 'string' ? id : undefined;
}
