import type { Response } from 'express';

/** A JSON-RPC request id (JSON-RPC 2.0 §4: a string or an integer here, as MCP requires). */
export type JsonRpcId = string | number;

/** Most messages of a batch answered one by one: the default `MCP_BATCH_MAX_MESSAGES`. */
export const BATCH_ANSWERED_MAX = 100;

/**
 * The ids an answer to request body `body` must carry (an error built without them
 * reads, to the MCP SDK, as a message it cannot parse — `invalid_union` — instead of the error):
 * the id of a single message, the ids of the requests of a batch (notifications and responses
 * are not answered); `[]` when no id is readable (a body not parsed, not JSON-RPC, or a batch
 * without requests), which JSON-RPC 2.0 §5 answers with `"id": null`. A batch of more than
 * {@link BATCH_ANSWERED_MAX} messages is answered as one (`[]`): it is refused whole anyway
 * (`MCP_BATCH_MAX_MESSAGES`), and one error per entry would multiply a 4 MiB body.
 *
 * @param body - the parsed request body; `undefined` when it was never read
 */
export function answerIdsOf(body: unknown): JsonRpcId[] {
  if (Array.isArray(body)) {
    if (body.length > BATCH_ANSWERED_MAX) return [];
    const items: unknown[] = body;
    return items.flatMap((item) => {
      if (typeof item !== 'object' || item === null || !('method' in item)) return [];
      const id = readableId(item);
      return id === undefined ? [] : [id];
    });
  }
  const id = readableId(body);
  return id === undefined ? [] : [id];
}

function readableId(message: unknown): JsonRpcId | undefined {
  if (typeof message !== 'object' || message === null || !('id' in message)) return undefined;
  const id: unknown = message.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : undefined;
}

/**
 * Writes a JSON-RPC error response (never HTML) with the given HTTP status, answering the
 * request(s) of `body` by id ({@link answerIdsOf}): one error for a single message, one per
 * request of a batch, `"id": null` only when no id was readable. Used for transport-level
 * failures on the MCP endpoint: parse errors (-32700), oversize bodies, wrong methods,
 * missing OAuth scopes, failures of the request itself.
 *
 * @param body - the request body as parsed (`req.body`); `undefined` when it could not be read
 */
export function sendJsonRpcError(res: Response, status: number, code: number, message: string, body: unknown): void {
  const ids = answerIdsOf(body);
  const answer = (id: JsonRpcId | null) => ({ jsonrpc: '2.0', error: { code, message }, id });
  res.status(status).json(Array.isArray(body) && ids.length > 0 ? ids.map(answer) : answer(ids[0] ?? null));
}
