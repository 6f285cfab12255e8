import type { NextFunction, Request, Response } from 'express';
import { DaguError, type ErrorCode } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import { requestIdOf } from './request-id';
import { REST_ERROR_LOCAL } from './authz-denials';
import { outageErrorOf, RETRY_AFTER_SECONDS } from './dependency-outage';

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
 * Codes of the MCP tools' input faults. REST has one input-fault code, so these
 * read as `invalid_request` there.
 */
const TOOL_INPUT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_tool_input',
  'invalid_resource_uri',
  'unsupported_resource',
  'unsupported_read_target',
  'unsupported_change_mode',
  'unsupported_change_type',
]);

/**
 * The error as REST shows it: every input fault is 400 `invalid_request` with
 * a `field` (`body` when the fault names none); other codes pass unchanged;
 * a Redis or PostgreSQL outage is `resource_unavailable` with `details.dependency`;
 * anything else that is not a `DaguError` is `internal_error`.
 */
export function restErrorOf(err: unknown): DaguError {
  if (!(err instanceof DaguError)) return outageErrorOf(err) ?? new DaguError('internal_error', 'Internal error.');
  if (err.code !== 'invalid_request' && !TOOL_INPUT_CODES.has(err.code)) return err;
  if (err.code === 'invalid_request' && err.field !== undefined) return err;
  return new DaguError('invalid_request', err.message, {
    field: err.field ?? 'body',
    ...(err.details !== undefined ? { details: err.details } : {}),
  });
}

/**
 * Sends a REST error body `{code, message, field?, details?, requestId}`.
 * Unknown failures are `internal_error` with a message that reveals nothing;
 * `internal_error` and `resource_unavailable` also carry the id in
 * `details.requestId`, as on every surface (dagu-model §10); `resource_unavailable`
 * is HTTP 503 with `Retry-After` ({@link RETRY_AFTER_SECONDS}).
 */
export function sendRestError(res: Response, err: unknown): void {
  const dagu = restErrorOf(err);
  res.locals[REST_ERROR_LOCAL] = { code: dagu.code, message: dagu.message };
  const requestId = requestIdOf(res);
  const body = dagu.toServiceError();
  const details =
    (dagu.code === 'internal_error' || dagu.code === 'resource_unavailable') && requestId !== undefined
      ? { ...(body.details ?? {}), requestId }
      : body.details;
  if (dagu.code === 'resource_unavailable') res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  res.status(HTTP_STATUS[dagu.code]).json({ ...body, ...(details !== undefined ? { details } : {}), requestId });
}

/**
 * Express error middleware for `/api/v1`: a path whose percent-escapes do not
 * decode is 400 on `path`, body-parser faults become 400/413/415 JSON on
 * `body`, the rest goes through `sendRestError`.
 */
export function restErrorHandler(logger: Logger) {
  return function restErrorHandler(err: unknown, _req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(err);
    const type = typeof err === 'object' && err !== null && 'type' in err ? err.type : undefined;
    if (type === 'entity.parse.failed') {
      return sendRestError(res, new DaguError('invalid_request', 'Request body is not valid JSON.', { field: 'body' }));
    }
    if (type === 'entity.too.large') {
      res.status(413).json({
        code: 'invalid_request',
        message: 'Request body is too large.',
        field: 'body',
        requestId: requestIdOf(res),
      });
      return;
    }
    if (err instanceof URIError) {
      // Express decodes route parameters before any handler runs; a bad escape is the client's fault.
      return sendRestError(
        res,
        new DaguError('invalid_request', 'The request path has a malformed percent-escape.', { field: 'path' }),
      );
    }
    const status = clientStatusOf(err);
    if (status !== undefined) {
      // Other body-parser refusals (unsupported charset or encoding, aborted body): the body is the fault.
      const message = err instanceof Error ? err.message : 'The request body could not be read.';
      res.status(status).json({ code: 'invalid_request', message, field: 'body', requestId: requestIdOf(res) });
      return;
    }
    if (!(err instanceof DaguError) && outageErrorOf(err) === undefined)
      logger.error({ err, requestId: requestIdOf(res) }, 'rest request failed');
    sendRestError(res, err);
  };
}

/** The 4xx status an HTTP library set on its own error (`status` with `expose`), or `undefined`. */
function clientStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('status' in err) || !('expose' in err)) return undefined;
  const { status, expose } = err;
  return typeof status === 'number' && status >= 400 && status < 500 && expose === true ? status : undefined;
}
