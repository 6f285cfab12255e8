/**
 * Raw Streamable HTTP for end-to-end tests that need to see the wire (status
 * codes, headers, SSE comments and event ids) rather than what the SDK
 * client makes of it.
 */

import { createSseBlockReader, type SseBlock } from '../../packages/runtime/test-fixtures/sse-blocks';

export type { SseBlock };

export const JSON_AND_SSE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A whole HTTP answer with its body parsed as JSON when it is JSON. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
}

/** POSTs `body` (JSON unless a string) to `url`. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...JSON_AND_SSE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: parse(text) };
}

/** `initialize` with the given revision; resolves with the session id and the answer. */
export async function initialize(
  url: string,
  protocolVersion = '2025-11-25',
  capabilities: Record<string, unknown> = {},
): Promise<{ sid: string; answer: RawAnswer }> {
  const answer = await post(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion, capabilities, clientInfo: { name: 'e2e-raw', version: '1' } },
  });
  const sid = answer.headers.get('mcp-session-id');
  if (sid === null) throw new Error(`initialize failed: ${answer.status} ${answer.text}`);
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid });
  return { sid, answer };
}

/** An SSE response being read as it arrives. */
export interface SseStream {
  readonly status: number;
  readonly headers: Headers;
  readonly blocks: SseBlock[];
  /** The first block (read or coming) that matches; rejects after `timeoutMs`. */
  next(match: (block: SseBlock) => boolean, timeoutMs?: number): Promise<SseBlock>;
  /** Resolves when the server ends the stream (or the connection drops). */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens a GET stream, or a POST whose answer is SSE; a non-SSE answer resolves with no blocks and `ended` settled. */
export async function openSse(
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown } = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const method = init.method ?? 'GET';
  const headers =
    method === 'GET' ? { accept: 'text/event-stream', ...init.headers } : { ...JSON_AND_SSE, ...init.headers };
  const started = Date.now();
  const res = await fetch(url, {
    method,
    headers,
    signal: controller.signal,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const reader = createSseBlockReader({ defaultTimeoutMs: 10_000, startedAt: started });
  const ended = (async () => {
    if (res.body === null) return;
    const chunks = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await chunks.read();
        if (done) break;
        reader.push(value);
      }
    } catch {
      // aborted by close(), or the connection dropped
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    blocks: reader.blocks,
    next: reader.next,
    ended,
    close: () => controller.abort(),
  };
}

/** The JSON-RPC message of a block (`{}` for comments and priming events). */
export function messageOf(block: SseBlock): Record<string, unknown> {
  const parsed = block.data ? parse(block.data) : undefined;
  return typeof parsed === 'object' && parsed !== null ? { ...parsed } : {};
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
