import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, type ServiceError } from '@dagu-mcp/contracts';
import { markUnexpected, unexpectedCauseOf } from '../unexpected-failure';
import { outageErrorOf } from '../../http/dependency-outage';

/** A resource-link content item (021 §Output: `uri`, `name`, `mimeType` required). */
export interface ResourceLink {
  readonly uri: string;
  readonly name: string;
  readonly mimeType: string;
}

/**
 * A successful tool result: the fixed success text first, then one
 * `resource_link` item per link; the payload lives in `structuredContent`
 * (dagu-model §8).
 */
export function toolSuccess(
  text: string,
  structured: Record<string, unknown>,
  links: readonly ResourceLink[] = [],
): CallToolResult {
  return {
    content: [
      { type: 'text', text },
      ...links.map((l) => ({ type: 'resource_link' as const, uri: l.uri, name: l.name, mimeType: l.mimeType })),
    ],
    structuredContent: structured,
  };
}

/**
 * A failed tool call (021/022/036 §Errors): `isError: true`, the message as
 * the only text item, and the error object as `structuredContent`. `context`
 * adds the tool-specific keys (`target`, `uri`, `mode`, `dagName`, …); keys
 * whose value is undefined are left out.
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

/**
 * Any thrown value as a contract error: `DaguError` keeps its code, a Redis or
 * PostgreSQL outage is `resource_unavailable` with `details.dependency`, anything
 * else is `internal_error` with a message that reveals nothing, marked with
 * its cause for the boundary to log (unexpected-failure.ts).
 */
export function asServiceError(err: unknown): ServiceError {
  if (err instanceof DaguError) return err.toServiceError();
  const outage = outageErrorOf(err);
  if (outage !== undefined) return outage.toServiceError();
  return markUnexpected<ServiceError>({ code: 'internal_error', message: 'Internal error.' }, err);
}
