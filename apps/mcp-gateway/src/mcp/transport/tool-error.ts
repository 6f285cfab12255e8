import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceError } from '@dagu-mcp/contracts';
import { markUnexpected, unexpectedCauseOf } from './unexpected-failure';

/**
 * A failed tool call (021/022/036 §Errors): `isError: true`, the message as
 * the only text item, and the error object as `structuredContent`. `context`
 * adds the tool-specific keys (`target`, `uri`, `mode`, `dagName`, …); keys
 * whose value is undefined are left out.
 *
 * Part of the transport because the request runner answers a `tools/call` that
 * failed outside its tool with it (request-runner.ts); the tools take it from
 * their result renderer, tools/tool-result.ts.
 */
export function toolError(error: ServiceError, context: Record<string, unknown> = {}): CallToolResult {
  const structured: Record<string, unknown> = { code: error.code, message: error.message };
  for (const [key, value] of Object.entries(context)) {
    if (value !== undefined) structured[key] = value;
  }
  if (error.field !== undefined) structured.field = error.field;
  if (error.details !== undefined) structured.details = error.details;
  const result: CallToolResult = {
    isError: true,
    content: [{ type: 'text', text: error.message }],
    structuredContent: structured,
  };
  // An unexpected failure's cause goes with the result to the boundary that logs it (unexpected-failure.ts).
  const unexpected = unexpectedCauseOf(error);
  return unexpected === undefined ? result : markUnexpected(result, unexpected.cause);
}
