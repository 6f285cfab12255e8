import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@dagu-mcp/runtime';
import { requestIdOf } from './request-id';

/**
 * How logs name an MCP session: the first 12 hex characters of its SHA-256.
 * A session id works like a bearer credential, so the id itself never goes to
 * a log line or an audit row.
 */
export function sessionRef(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 12);
}

/**
 * One structured line per finished request (`debug`; `warn` for 5xx):
 * request id, method, route path, status, duration in ms, and for MCP the
 * session as `sessionRef` — the first 12 hex characters of its SHA-256,
 * because a session id works like a bearer credential and never goes to logs.
 * The URL is logged without its query (it may have carried `?token=`).
 */
export function requestLog(logger: Logger) {
  return function requestLog(req: Request, res: Response, next: NextFunction): void {
    const started = performance.now();
    res.on('finish', () => {
      const session = req.header('mcp-session-id');
      const line = {
        requestId: requestIdOf(res),
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        ...(session !== undefined ? { sessionRef: sessionRef(session) } : {}),
      };
      if (res.statusCode >= 500) logger.warn(line, 'request failed');
      else logger.debug(line, 'request');
    });
    next();
  };
}
