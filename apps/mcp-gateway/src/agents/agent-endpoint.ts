import type { NextFunction, Request, Response } from 'express';
import type { AuditEvent } from '../audit/audit-log';
import type { AgentKeyRecord } from '../auth/agent-key.repository';
import { isAgentKey } from '../auth/agent-key.repository';
import type { ApiKeyVerifier } from '../auth/api-key-cache';
import { takeCredential } from '../auth/credentials';
import { requestIdOf } from '../http/request-id';
import type { AgentCatalog, AgentCatalogCache } from './agent-catalog-cache';
import { agentPrincipal } from './agent-tool-base';
import type { Principal } from '@dagu-mcp/contracts';

/**
 * OAuth as an agent endpoint takes it (issue 24 item 3, issue 23 items 0 and 1): the resource
 * the request's mount names (`<PUBLIC_URL>/mcp/v1/{workspace}/{agent}`), the 401 challenge
 * pointing at that resource's metadata, and access-token verification for that audience.
 */
export interface AgentEndpointOAuth {
  resourceOf(req: Request): string | undefined;
  challenge(req: Request): string | undefined;
  isAccessToken(token: string): boolean;
  /** The token's user and scopes when it is live and its audience is `resource`; else undefined. */
  verifyAccess(
    token: string,
    resource: string | undefined,
  ): Promise<{ principal: Principal; scopes: readonly string[]; clientId: string } | undefined>;
}

/** What the agent endpoint's middleware needs. */
export interface AgentEndpointDeps {
  readonly catalogs: AgentCatalogCache;
  readonly keys: ApiKeyVerifier<AgentKeyRecord>;
  readonly audit: (event: AuditEvent) => void;
  /** The built-in OAuth server, when on: access tokens for this agent's URL are accepted too. */
  readonly oauth?: AgentEndpointOAuth;
}

/** The challenge of an agent endpoint: agent keys are Bearer tokens. */
const CHALLENGE = 'Bearer realm="dagu-agent"';

/**
 * The gate of `/mcp/v1/{workspace}/{agent}` (Express params `workspace`,
 * `agent`), before any MCP handling (issue 24 items 2, 3, 7):
 * 1. resolves the address to a published agent's catalog, else 404
 *    `resource_not_found` without saying which part was unknown (so a wrong
 *    address is a 404 whatever the credential);
 * 2. accepts only a live key of this agent (`Authorization: Bearer
 *    dagu_agent_…`, or `?token=` with no header): a user's API key, login
 *    token, Basic credential or another agent's key is 401 with
 *    `WWW-Authenticate`, audited as `mcp.request.denied`.
 * On success the request's principal is the agent (credential type `agent_key`).
 */
export function agentGate(deps: AgentEndpointDeps) {
  return async function agentGate(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const catalog = await deps.catalogs.resolve(String(req.params.workspace), String(req.params.agent));
      if (catalog === undefined) {
        res.status(404).json({ code: 'resource_not_found', message: 'No published agent at this address.' });
        return;
      }
      if (await authenticated(deps, catalog, req, res)) next();
    } catch (err) {
      next(err);
    }
  };
}

/** Step 2 of {@link agentGate}: true when the request carries a live key of the agent; else answered 401. */
async function authenticated(
  deps: AgentEndpointDeps,
  catalog: AgentCatalog,
  req: Request,
  res: Response,
): Promise<boolean> {
  const credential = takeCredential(req);
  const { agent } = catalog;
  const bearer = typeof credential === 'object' && credential.scheme === 'bearer' ? credential.token : undefined;
  // An OAuth access token counts only when its audience is this agent's own URL.
  const oauthUser =
    bearer !== undefined && deps.oauth?.isAccessToken(bearer) === true
      ? await deps.oauth.verifyAccess(bearer, deps.oauth.resourceOf(req) ?? 'no-resource')
      : undefined;
  const record = bearer !== undefined && isAgentKey(bearer) ? await deps.keys.verify(bearer) : undefined;
  if (oauthUser === undefined && (record === undefined || record.agentId !== agent.id)) {
    deps.audit({
      category: 'mcp',
      action: 'mcp.request.denied',
      principal: undefined,
      target: `${req.method} ${req.baseUrl}`,
      outcome: 'denied',
      requestId: requestIdOf(res),
      details: { code: 'unauthenticated', status: 401, agent: `${agent.workspace}/${agent.slug}` },
    });
    const oauthChallenge = deps.oauth?.challenge(req);
    res.setHeader('WWW-Authenticate', oauthChallenge === undefined ? [CHALLENGE] : [oauthChallenge, CHALLENGE]);
    res.status(401).json({
      code: 'unauthenticated',
      message:
        credential === undefined
          ? 'Authentication is required: send a key of this agent as a Bearer token.'
          : 'The credential is not a valid key of this agent.',
    });
    return false;
  }
  // Either credential acts as the agent: its catalog and its authors' roles bound every call
  // (docs/decisions.md "OAuth on agent endpoints").
  const principal = agentPrincipal(agent);
  res.locals.principal = principal;
  (req as Request & { auth?: unknown }).auth = { token: '', clientId: principal.id, scopes: [], extra: { principal } };
  return true;
}
