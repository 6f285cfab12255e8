import type { Response } from 'express';

/**
 * Writes a JSON-RPC error response (never HTML) with the given HTTP status.
 * Used for transport-level failures on the MCP endpoint: parse errors
 * (-32700), missing or unknown sessions, oversize bodies.
 */
export function sendJsonRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id });
}
