import { z } from 'zod';

/**
 * Every error code the wire contract knows (specs 020, 021, 022, 036).
 * Services reply with one of these; only the gateway maps them to HTTP status
 * codes and JSON-RPC errors.
 */
export const ErrorCodeSchema = z.enum([
  'unauthenticated',
  'unauthorized',
  'invalid_api_key_surface',
  'invalid_resource_uri',
  'unsupported_resource',
  'resource_not_found',
  'resource_unavailable',
  'internal_error',
  'invalid_tool_input',
  'unsupported_read_target',
  'unsupported_change_mode',
  'unsupported_change_type',
  'conflict',
  /** REST only: a request body or query that breaks the route's contract (HTTP 400). */
  'invalid_request',
  /** REST only: too many failed credentials (HTTP 429 with Retry-After). */
  'rate_limited',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** The error object a service returns in a failed bus reply: `{code, message, field?, details?}`. */
export const ServiceErrorSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  field: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ServiceError = z.infer<typeof ServiceErrorSchema>;

/**
 * A failure with a contract code, thrown by domain code and turned into a
 * failed reply (services) or an MCP/REST error (gateway) at one boundary.
 */
export class DaguError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, opts: { field?: string; details?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'DaguError';
    this.code = code;
    this.field = opts.field;
    this.details = opts.details;
  }

  /** The wire shape of this error, with optional keys only when set. */
  toServiceError(): ServiceError {
    return {
      code: this.code,
      message: this.message,
      ...(this.field !== undefined ? { field: this.field } : {}),
      ...(this.details !== undefined ? { details: this.details } : {}),
    };
  }
}

/** True when the error is worth retrying: a dependency was down, not bad input. */
export function isTransientCode(code: ErrorCode): boolean {
  return code === 'resource_unavailable';
}
