import type { NextFunction, Request, Response } from 'express';
import type { AuditEvent } from '../audit/audit-log';
import type { AgentKeyRecord } from '../auth/agent-key.repository';
import { isAgentKey } from '../auth/agent-key.repository';
import type { ApiKeyVerifier } from '../auth/api-key-cache';
import { takeCredential } from '../auth/credentials';
import { requestIdOf } from '../http/request-id';
import type { AgentCatalog, AgentCatalogCache } from './agent-catalog-cache';
import { agentPrincipal } from './agent-tool-base';

/** What the agent endpoint's middleware needs. */
export interface AgentEndpointDeps {
  readonly catalogs: AgentCatalogCache;
  readonly keys: ApiKeyVerifier<AgentKeyRecord>;
  readonly audit: (event: AuditEvent) => void;
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
  const record =
    typeof credential === 'object' && credential.scheme === 'bearer' && isAgentKey(credential.token)
      ? await deps.keys.verify(credential.token)
      : undefined;
  const { agent } = catalog;
  if (record === undefined || record.agentId !== agent.id) {
    deps.audit({
      category: 'mcp',
      action: 'mcp.request.denied',
      principal: undefined,
      target: `${req.method} ${req.baseUrl}`,
      outcome: 'denied',
      requestId: requestIdOf(res),
      details: { code: 'unauthenticated', status: 401, agent: `${agent.workspace}/${agent.slug}` },
    });
    res.setHeader('WWW-Authenticate', CHALLENGE);
    res.status(401).json({
      code: 'unauthenticated',
      message:
        credential === undefined
          ? 'Authentication is required: send a key of this agent as a Bearer token.'
          : 'The credential is not a valid key of this agent.',
    });
    return false;
  }
  const principal = agentPrincipal(agent);
  res.locals.principal = principal;
  (req as Request & { auth?: unknown }).auth = { token: '', clientId: principal.id, scopes: [], extra: { principal } };
  return true;
}
