import type { UpstreamFailure, UpstreamResponse } from './call-upstream';

/** An MCP `tools/call` result (the fields this package fills). */
export interface RestToolResult {
  readonly isError: boolean;
  readonly content: Array<{ type: 'text'; text: string }>;
  readonly structuredContent: Record<string, unknown>;
}

/** Characters of an upstream error body kept in the result. */
export const ERROR_BODY_CHARS = 2000;
/** Characters of the compact text item (the full answer is in `structuredContent`). */
export const TEXT_CHARS = 4000;

/**
 * The tool result of an upstream answer:
 * - `structuredContent`: `{operation, status, contentType, body, truncated}` where `body` is
 *   the parsed JSON when the answer is complete JSON, else the text;
 * - a compact text item (`HTTP <status>` and the body, cut at {@link TEXT_CHARS});
 * - a status ≥ 400 is `isError`; its body is the parsed JSON when the answer is complete JSON
 *   of at most {@link ERROR_BODY_CHARS} characters (an upstream's JSON error comes back as JSON), else the text trimmed to {@link ERROR_BODY_CHARS}; 401 and
 *   403 carry `configurationProblem: true` (the upstream refused *our* credential: the
 *   platform team's setting, not the agent's input).
 */
export function resultOfResponse(operation: string, response: UpstreamResponse): RestToolResult {
  const isError = response.status >= 400;
  const body = isError ? errorBody(response) : parseBody(response);
  const structured: Record<string, unknown> = {
    operation,
    status: response.status,
    contentType: response.contentType,
    body,
    truncated: response.truncated || (isError && response.text.length > ERROR_BODY_CHARS),
  };
  if (isError && (response.status === 401 || response.status === 403)) {
    structured.configurationProblem = true;
    structured.message =
      `The upstream refused the credential configured for ${operation} (HTTP ${response.status}): ` +
      'ask the platform team to check the upstream.';
  } else if (isError) {
    structured.message = `The upstream answered HTTP ${response.status}.`;
  }
  const rendered = typeof body === 'string' ? body : JSON.stringify(body);
  const marker = structured.truncated === true ? ' [truncated]' : '';
  const text = `HTTP ${response.status}${marker}\n${rendered.length > TEXT_CHARS ? `${rendered.slice(0, TEXT_CHARS)}…` : rendered}`;
  return { isError, content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * The tool result of a call that got no HTTP answer: `isError`, code `resource_unavailable`,
 * `details.kind` naming what happened (`timeout`, `network`, `redirect_refused`,
 * `address_refused`) and `details.operation`; an address refusal adds `details.address` and
 * `details.rule` (`loopback`, `link-local`, `allow-list`, …). No URL, header or credential.
 */
export function resultOfFailure(operation: string, failure: UpstreamFailure): RestToolResult {
  const structured = {
    code: 'resource_unavailable',
    message: `${operation}: ${failure.message}`,
    details: {
      operation,
      kind: failure.kind,
      attempts: failure.attempts,
      // Which address which rule refused: the resolved address, never the URL.
      ...(failure.refused !== undefined ? { address: failure.refused.address, rule: failure.refused.rule } : {}),
    },
  };
  return { isError: true, content: [{ type: 'text', text: structured.message }], structuredContent: structured };
}

/** An error answer's body: parsed JSON when it is complete JSON that fits {@link ERROR_BODY_CHARS}, else its text, trimmed. */
function errorBody(response: UpstreamResponse): unknown {
  if (response.text.length <= ERROR_BODY_CHARS) {
    const parsed = parseBody(response);
    if (typeof parsed !== 'string') return parsed;
  }
  return response.text.slice(0, ERROR_BODY_CHARS);
}

function parseBody(response: UpstreamResponse): unknown {
  if (response.truncated || !/\bjson\b/i.test(response.contentType)) return response.text;
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    return response.text;
  }
}
