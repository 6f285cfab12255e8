import type { Response } from 'express';
import { sharedResultJson } from './shared-result';

/**
 * Writes the JSON answers of the MCP endpoint (Streamable HTTP, `application/json`
 * bodies; Dagu spec 020 §Endpoint) in one UTF-8 encoding, without Express's
 * `res.json`: that one hashes every body for an `ETag` (a SHA-1 over up to
 * 40 KB for a `dags` page), which a JSON-RPC POST answer never uses.
 *
 * A result marked by `shareResult` (shared-result.ts) has its JSON
 * encoded once; answers carrying it splice those bytes in after their own
 * `jsonrpc` and `id`.
 */

const CLOSE = Buffer.from('}');

/**
 * The UTF-8 JSON of `body`, a JSON-RPC message or batch. A single message
 * whose `result` was marked by `shareResult` is assembled from its
 * other members and the stored bytes (same JSON, members in another order).
 */
export function encodeJsonBody(body: unknown): Buffer {
  if (typeof body !== 'object' || body === null || !('result' in body)) return encodePlain(body);
  const shared = sharedResultJson(body.result);
  if (shared === undefined) return encodePlain(body);
  const { result: _spliced, ...rest } = body;
  const head = JSON.stringify(rest);
  const open = `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"result":`;
  return Buffer.concat([Buffer.from(open, 'utf8'), shared, CLOSE]);
}

function encodePlain(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * Sends `body` as `application/json; charset=utf-8` with `status` and its
 * `Content-Length`, and ends the response (what `res.status(s).json(b)` does,
 * less the `ETag`).
 */
export function writeJson(res: Response, status: number, body: unknown): void {
  const bytes = encodeJsonBody(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}
