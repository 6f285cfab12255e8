import { ErrorCode as JsonRpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, type ErrorCode } from '@dagu-mcp/contracts';

/**
 * JSON-RPC error codes for the 020 error object on non-tool requests
 * (dagu-model §10): -32002 not found, -32602 bad URI or family, -32603
 * internal; the -32001 range for the rest.
 */
const JSON_RPC_CODE: Record<ErrorCode, number> = {
  resource_not_found: -32002,
  invalid_resource_uri: JsonRpcCode.InvalidParams,
  unsupported_resource: JsonRpcCode.InvalidParams,
  internal_error: JsonRpcCode.InternalError,
  unauthenticated: -32001,
  unauthorized: -32003,
  invalid_api_key_surface: -32004,
  resource_unavailable: -32005,
  conflict: -32006,
  invalid_tool_input: JsonRpcCode.InvalidParams,
  unsupported_read_target: JsonRpcCode.InvalidParams,
  unsupported_change_mode: JsonRpcCode.InvalidParams,
  unsupported_change_type: JsonRpcCode.InvalidParams,
  invalid_request: JsonRpcCode.InvalidRequest,
  rate_limited: -32007,
};

/**
 * Turns a failure of a non-tool request into a JSON-RPC error whose `data` is
 * the 020 error object `{code, message, resourceUri?, operation?, details?}`
 * and whose `message` is its message (dagu-model §10). Anything that is not a
 * `DaguError` becomes `internal_error` with a message that reveals nothing.
 */
export function toMcpError(
  err: unknown,
  opts: { resourceUri?: string; operation?: string; invalidParams?: boolean } = {},
): McpError {
  if (opts.invalidParams && err instanceof Error && !(err instanceof DaguError)) {
    return new McpError(JsonRpcCode.InvalidParams, err.message);
  }
  const dagu = err instanceof DaguError ? err : new DaguError('internal_error', 'Internal error.');
  const details = { ...(dagu.details ?? {}), ...(dagu.field !== undefined ? { field: dagu.field } : {}) };
  const data: Record<string, unknown> = { code: dagu.code, message: dagu.message };
  if (opts.resourceUri !== undefined && opts.resourceUri !== '') data.resourceUri = opts.resourceUri;
  if (opts.operation !== undefined) data.operation = opts.operation;
  if (Object.keys(details).length > 0) data.details = details;
  const error = new McpError(JSON_RPC_CODE[dagu.code], dagu.message, data);
  // McpError prefixes "MCP error <code>: "; the wire message must be the error object's own.
  error.message = dagu.message;
  return error;
}
