/**
 * A raw MCP Streamable HTTP client on node:http (keep-alive agents, exact
 * timings): POST a JSON-RPC message, read the answer as JSON or as an SSE
 * stream, open a session, open a GET stream. Used by the orchestrator (setup)
 * and by the load process (sequential, burst and SSE scenarios); the
 * high-rate scenarios use autocannon with the same headers and bodies.
 */
import http from 'node:http';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

/** The revision the bench speaks: the one the pinned SDK's own client sends. */
export const PROTOCOL_VERSION = LATEST_PROTOCOL_VERSION;
export const ACCEPT = 'application/json, text/event-stream';

/** The stateless revision (issue 22) and the `_meta` envelope each of its requests carries. */
export const MODERN_VERSION = '2026-07-28';
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'dagu-mcp-bench', version: '1' },
};

/** A keep-alive agent holding at most `sockets` connections. */
export function keepAliveAgent(sockets) {
  return new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
}

/** Headers of an MCP POST (JSON body, both answer types accepted, the protocol revision, optional session and credential). */
export function mcpHeaders({ sessionId, token, protocolVersion = PROTOCOL_VERSION } = {}) {
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': protocolVersion };
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return headers;
}

/**
 * One HTTP request; resolves with status, headers, body text and the time
 * from write to the last byte (ms). Never rejects on HTTP status; rejects on
 * socket errors and after `timeoutMs`.
 */
export function request(url, { method = 'POST', headers = {}, body, agent, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The JSON-RPC messages of an answer: one JSON object (or a batch array), or
 * every `data:` payload of an SSE body (empty priming events are skipped).
 */
export function messagesOf(text, contentType = '') {
  if (contentType.includes('text/event-stream')) {
    const out = [];
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data.trim() === '') continue;
      try {
        out.push(JSON.parse(data));
      } catch {
        /* a partial or non-JSON event: ignored */
      }
    }
    return out;
  }
  if (text.trim() === '') return [];
  try {
    const parsed = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    return [];
  }
}

/** The response to request `id` among the messages of an answer, or undefined. */
export function responseTo(answer, id) {
  return messagesOf(answer.text, String(answer.headers['content-type'] ?? '')).find(
    (m) => m && m.id === id && ('result' in m || 'error' in m),
  );
}

/**
 * How a tools/call or resources/read answer went: `ok`, or a short error
 * class (`http_<status>`, `rpc_<code>`, `tool_<code>`, `no_response`).
 */
export function classify(answer, id) {
  if (answer.status < 200 || answer.status >= 300) return `http_${answer.status}`;
  const msg = responseTo(answer, id);
  if (msg === undefined) return 'no_response';
  if (msg.error) return `rpc_${msg.error.code}`;
  if (msg.result?.isError === true) return `tool_${msg.result.structuredContent?.code ?? 'error'}`;
  return 'ok';
}

/** A JSON-RPC request body with id `id`. */
export function rpcBody(id, method, params) {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

/**
 * Opens an MCP session: `initialize` then `notifications/initialized`.
 * Resolves with the session id (undefined for a stateless server) and the
 * negotiated revision.
 *
 * @throws Error when initialize is refused
 */
export async function openSession(url, { token, agent, clientName = 'dagu-mcp-bench' } = {}) {
  const init = await request(url, {
    headers: mcpHeaders({ token }),
    agent,
    body: rpcBody(0, 'initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: clientName, version: '1.0.0' },
    }),
  });
  const msg = responseTo(init, 0);
  if (init.status !== 200 || msg?.result === undefined)
    throw new Error(`initialize failed: HTTP ${init.status} ${init.text.slice(0, 300)}`);
  const sessionId = init.headers['mcp-session-id'];
  const protocolVersion = msg.result.protocolVersion ?? PROTOCOL_VERSION;
  const note = await request(url, {
    headers: mcpHeaders({ token, sessionId, protocolVersion }),
    agent,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (note.status >= 300)
    throw new Error(`notifications/initialized failed: HTTP ${note.status} ${note.text.slice(0, 300)}`);
  return { sessionId: typeof sessionId === 'string' ? sessionId : undefined, protocolVersion };
}

/** Ends a session with DELETE (errors ignored: the server may not support it). */
export async function closeSession(url, session, { token, agent } = {}) {
  if (session.sessionId === undefined) return;
  await request(url, { method: 'DELETE', headers: mcpHeaders({ token, ...session }), agent }).catch(() => undefined);
}

/**
 * A JSON-RPC call in a session; resolves with the `result`.
 *
 * @throws Error on HTTP failure, a JSON-RPC error or no response
 */
export async function call(url, session, method, params, { token, agent, id = 1, timeoutMs } = {}) {
  const answer = await request(url, {
    headers: mcpHeaders({ token, ...session }),
    agent,
    body: rpcBody(id, method, params),
    timeoutMs,
  });
  const msg = responseTo(answer, id);
  if (answer.status !== 200 || msg === undefined)
    throw new Error(`${method} failed: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
  if (msg.error) throw new Error(`${method} failed: ${JSON.stringify(msg.error).slice(0, 300)}`);
  return msg.result;
}
