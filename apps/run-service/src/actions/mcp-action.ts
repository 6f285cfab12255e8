import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AddressRanges, guardedFetch } from '@dagu-mcp/runtime';
import { ActionError, asRecord, errorMessage, type ActionOutput, type WithMap } from './action-types';

/**
 * `mcp.call` (dagu-actions §1.9 as amended): one tool call on an
 * MCP server over Streamable HTTP, no model in the loop. The SDK client sends
 * `initialize` then `tools/call` with `with.tool` and `with.arguments`; every
 * HTTP request goes through runtime's `guardedFetch` with run-service's
 * `OUTBOUND_ALLOW_CIDRS` (`host.reachable`), like `http.request`. Output: the
 * result's `structuredContent` as JSON, else its text items joined by
 * newlines. A result with `isError: true`, a JSON-RPC error or a transport
 * error fails the step with that text. `with.timeout` (s) bounds the call
 * (default {@link DEFAULT_TIMEOUT_SEC}).
 */

/** Deadline of the whole call without `with.timeout`, s. */
export const DEFAULT_TIMEOUT_SEC = 60;
/** Bytes of one HTTP response read at most. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

function headerRecord(headers: unknown): Record<string, string> {
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers.map(([k, v]: [string, string]) => [k, v]));
  const map = asRecord(headers) ?? {};
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, String(v)]));
}

/** A fetch for the SDK transport that goes through the SSRF guard (buffered: each answer is read whole). */
function guardedFetchLike(cidrs: string[], timeoutMs: number) {
  const reachable = { ranges: AddressRanges.parse(cidrs), setting: 'OUTBOUND_ALLOW_CIDRS' };
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    // The standalone GET stream (server-initiated messages) is not needed for one call, and a
    // buffered fetch would wait on it until the deadline: answered as a server without one (405).
    if ((init?.method ?? 'GET').toUpperCase() === 'GET') return new Response(null, { status: 405 });
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const answer = await guardedFetch(String(url), {
      reachable,
      protocols: ['http:', 'https:'],
      timeoutMs,
      maxBytes: MAX_RESPONSE_BYTES,
      method: init?.method ?? 'GET',
      headers: headerRecord(init?.headers),
      ...(body !== undefined ? { body } : {}),
    });
    const headers = new Headers();
    for (const [key, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(key, one);
    }
    const empty = answer.status === 204 || answer.status === 304 || answer.status === 202;
    return new Response(empty ? null : answer.body, { status: answer.status, headers });
  };
}

function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  return content
    .map((item: unknown) => asRecord(item))
    .filter((item) => item?.type === 'text' && typeof item.text === 'string')
    .map((item) => String(item?.text))
    .join('\n');
}

/** Calls the tool. @throws ActionError with the error text of the call */
export async function runMcpCall(w: WithMap, host: WithMap): Promise<ActionOutput> {
  if (typeof w.url !== 'string' || typeof w.tool !== 'string')
    throw new ActionError('with.url and with.tool are required');
  const cidrs = Array.isArray(host.reachable) ? host.reachable.map(String) : [];
  const timeoutMs = (typeof w.timeout === 'number' && w.timeout > 0 ? w.timeout : DEFAULT_TIMEOUT_SEC) * 1000;
  const transport = new StreamableHTTPClientTransport(new URL(w.url), {
    requestInit: { headers: headerRecord(w.headers) },
    fetch: guardedFetchLike(cidrs, timeoutMs),
  });
  const client = new Client({ name: 'dagu-mcp-run-service', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: timeoutMs });
    const result = await client.callTool({ name: w.tool, arguments: asRecord(w.arguments) ?? {} }, undefined, {
      timeout: timeoutMs,
    });
    const record = asRecord(result) ?? {};
    const text = resultText(record);
    if (record.isError === true) throw new ActionError(text === '' ? `tool ${w.tool} returned an error` : text);
    const structured = record.structuredContent;
    return { stdout: structured !== undefined ? `${JSON.stringify(structured)}\n` : text === '' ? '' : `${text}\n` };
  } catch (error) {
    if (error instanceof ActionError) throw error;
    throw new ActionError(`mcp.call ${w.tool}: ${errorMessage(error)}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}
