import type { ServerOptions } from 'node:http';

/** How often Node looks for connections past their header or request deadline, ms (Node's own default: 30 s). */
export const CONNECTION_CHECK_INTERVAL_MS = 1000;

/**
 * The public HTTP server's deadlines on what a client sends (with Node's defaults,
 * 60 s for headers checked every 30 s, 2,000 slow-header sockets stayed open 75 s): a socket
 * that has not finished a request's header block within `headersTimeoutMs` (cut to
 * `requestTimeoutMs`, which Node requires) or the whole request within `requestTimeoutMs` is
 * answered 408 and closed, at most {@link CONNECTION_CHECK_INTERVAL_MS} later. Answers, SSE
 * streams included, are not limited: the deadlines end once the request is read.
 *
 * @param headersTimeoutMs - `HTTP_HEADERS_TIMEOUT_MS`, ms
 * @param requestTimeoutMs - `HTTP_REQUEST_TIMEOUT_MS`, ms
 * @returns options for `http.createServer(options, listener)`
 */
export function serverTimeouts(headersTimeoutMs: number, requestTimeoutMs: number): ServerOptions {
  return {
    headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs),
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: CONNECTION_CHECK_INTERVAL_MS,
  };
}
