import type { NextFunction, Request, Response } from 'express';
import { scopesNeededBy } from '../oauth/scopes';
import { sendJsonRpcError } from './json-rpc-error';

/**
 * Refuses an MCP request whose OAuth access token lacks a scope the request
 * needs (issue 23 item 5; mcp-revisions §3): HTTP 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="…",
 * resource_metadata="…"` and a JSON-RPC error naming the scope. Requests made
 * with other credentials (no `res.locals.oauthScopes`) pass untouched. Runs
 * after the body is parsed.
 *
 * @param metadataUrlOf the Protected Resource Metadata URL for the request
 */
export function oauthScopeGuard(metadataUrlOf: (req: Request) => string | undefined) {
  return function oauthScopeGuard(req: Request, res: Response, next: NextFunction): void {
    const held: unknown = res.locals.oauthScopes;
    if (!Array.isArray(held)) return next();
    const missing = scopesNeededBy(req.body).filter((s) => !held.includes(s));
    if (missing.length === 0) return next();
    const scope = missing.join(' ');
    const metadata = metadataUrlOf(req);
    res.setHeader(
      'WWW-Authenticate',
      `Bearer error="insufficient_scope", scope="${scope}"` +
        (metadata === undefined ? '' : `, resource_metadata="${metadata}"`) +
        `, error_description="This request needs the scope ${scope}."`,
    );
    sendJsonRpcError(res, 403, -32001, `insufficient_scope: this request needs the OAuth scope ${scope}.`, req.body);
  };
}
