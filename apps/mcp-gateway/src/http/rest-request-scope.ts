import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { runWithIdempotencyKey, runWithRequestId } from '@dagu-mcp/bus';
import { DaguError, IdempotencyKeySchema } from '@dagu-mcp/contracts';
import { requestIdOf } from './request-id';

/** The REST header of an idempotency key (docs/rest-api.md "Idempotency"). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/**
 * Runs the rest of a REST request inside its request scope: every bus call
 * it makes carries the request id, and every mutation call the caller's
 * `Idempotency-Key` (1–255 visible ASCII characters, else 400
 * `invalid_request` on `Idempotency-Key`). The service scopes the key to the
 * caller's principal: the same key with the same payload within 24 h returns
 * the original result, with another payload 409 `conflict`.
 */
export function restRequestScope(): RequestHandler {
  return function restRequestScope(req: Request, res: Response, next: NextFunction): void {
    const raw = req.header(IDEMPOTENCY_HEADER);
    let key: string | undefined;
    if (raw !== undefined) {
      const parsed = IdempotencyKeySchema.safeParse(raw);
      if (!parsed.success) {
        next(
          new DaguError('invalid_request', `${IDEMPOTENCY_HEADER} must be 1–255 visible ASCII characters.`, {
            field: IDEMPOTENCY_HEADER,
          }),
        );
        return;
      }
      key = parsed.data;
    }
    const id = requestIdOf(res);
    if (id === undefined) runWithIdempotencyKey(key, () => next());
    else runWithRequestId(id, () => next(), key);
  };
}
