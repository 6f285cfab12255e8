import type { NextFunction, Request, Response } from 'express';
import { PrincipalSchema } from '@dagu-mcp/contracts';
import { capScopes, scopesNeededBy } from '../oauth/scopes';
import { sendJsonRpcError } from './json-rpc-error';

/**
 * Refuses an MCP request whose OAuth access token lacks a scope the request
 * needs, when a new consent could grant it (mcp-revisions §3 "Ours"): HTTP 403 with `WWW-Authenticate: Bearer
 * error="insufficient_scope", scope="…", resource_metadata="…"` and a JSON-RPC
 * error naming the scope, which sends the client to step-up authorization.
 *
 * A scope the person's current role can never hold is not challenged: a consent
 * page could not grant it, and the client would loop through step-up. Such a
 * request goes on to its tool, whose action refuses the role (dagu-model §10: an
 * `isError` result with `unauthorized`). Nothing is let through that the role
 * would not allow anyway: a scope's lowest role is the lowest role of the tool
 * actions it gates (oauth/scopes.ts `SCOPE_MIN_ROLE`), so a role that cannot hold
 * the scope can do none of them. The role decides from the user as they are now
 * (the principal the token resolved to), never from the token.
 *
 * Requests made with other credentials (a principal without `scopes`) pass
 * untouched. Runs after the body is parsed.
 *
 * @param metadataUrlOf the Protected Resource Metadata URL for the request
 */
export function oauthScopeGuard(metadataUrlOf: (req: Request) => string | undefined) {
  return function oauthScopeGuard(req: Request, res: Response, next: NextFunction): void {
    const principal = PrincipalSchema.safeParse(res.locals.principal);
    if (!principal.success) {
      // Fail closed: an OAuth caller whose principal does not read is never let past the scope check.
      const raw: unknown = res.locals.principal;
      const oauth =
        typeof raw === 'object' && raw !== null && 'credentialType' in raw && raw.credentialType === 'oauth';
      if (oauth)
        return void sendJsonRpcError(res, 403, -32001, 'insufficient_scope: the token could not be read.', req.body);
      return next();
    }
    const held = principal.data.scopes;
    if (held === undefined) return next();
    const missing = scopesNeededBy(req.body).filter((s) => !held.includes(s));
    const grantable = capScopes(missing, principal.data.role);
    if (grantable.length === 0) return next();
    const scope = grantable.join(' ');
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
