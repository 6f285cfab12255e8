import type { NextFunction, Request, Response } from 'express';
import { DaguError, type ErrorCode } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import { requestIdOf } from './request-id';

/** HTTP status of each contract code on REST routes (only the gateway maps codes to HTTP, CONTRIBUTING §7). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  unauthenticated: 401,
  unauthorized: 403,
  invalid_api_key_surface: 403,
  invalid_resource_uri: 400,
  unsupported_resource: 400,
  invalid_tool_input: 400,
  unsupported_read_target: 400,
  unsupported_change_mode: 400,
  unsupported_change_type: 400,
  resource_not_found: 404,
  conflict: 409,
  resource_unavailable: 503,
  internal_error: 500,
  invalid_request: 400,
  rate_limited: 429,
};

/**
 * Sends a REST error body `{code, message, field?, details?, requestId}`.
 * Unknown failures are `internal_error` with a message that reveals nothing;
 * `internal_error` and `resource_unavailable` also carry the id in
 * `details.requestId`, as on every surface (dagu-model §10).
 */
export function sendRestError(res: Response, err: unknown): void {
  const dagu = err instanceof DaguError ? err : new DaguError('internal_error', 'Internal error.');
  const requestId = requestIdOf(res);
  const body = dagu.toServiceError();
  const details =
    (dagu.code === 'internal_error' || dagu.code === 'resource_unavailable') && requestId !== undefined
      ? { ...(body.details ?? {}), requestId }
      : body.details;
  res.status(HTTP_STATUS[dagu.code]).json({ ...body, ...(details !== undefined ? { details } : {}), requestId });
}

/** Express error middleware for `/api/v1`: body-parser faults become 400/413 JSON, the rest goes through `sendRestError`. */
export function restErrorHandler(logger: Logger) {
  return function restErrorHandler(err: unknown, _req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(err);
    const type = typeof err === 'object' && err !== null && 'type' in err ? err.type : undefined;
    if (type === 'entity.parse.failed') {
      return sendRestError(res, new DaguError('invalid_request', 'Request body is not valid JSON.', { field: 'body' }));
    }
    if (type === 'entity.too.large') {
      res
        .status(413)
        .json({ code: 'invalid_request', message: 'Request body is too large.', requestId: requestIdOf(res) });
      return;
    }
    if (!(err instanceof DaguError)) logger.error({ err, requestId: requestIdOf(res) }, 'rest request failed');
    sendRestError(res, err);
  };
}
