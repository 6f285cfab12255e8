import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, type ServiceError } from '@dagu-mcp/contracts';
import { markUnexpected } from '../transport/unexpected-failure';
import { outageErrorOf } from '../../http/dependency-outage';

/** The failed tool result (021/022/036 §Errors); built in the transport, whose request runner answers with it too. */
export { toolError } from '../transport/tool-error';

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
