import type { NextFunction, Request, Response } from 'express';
import type { AuditEvent } from '../audit/audit-log';
import type { AgentKeyRecord } from '../auth/agent-key.repository';
import { isAgentKey } from '../auth/agent-key.repository';
import type { ApiKeyVerifier } from '../auth/api-key-cache';
import { takeCredential } from '../auth/credentials';
import { requestIdOf } from '../http/request-id';
import type { AgentCatalog, AgentCatalogCache } from './agent-catalog-cache';
import { agentPrincipal } from './agent-tool-base';
import { personAuthority } from './agent-sign-in';
import type { Principal } from '@dagu-mcp/contracts';

/**
 * OAuth as an agent endpoint takes it: the resource
 * the request's mount names (`<PUBLIC_URL>/mcp/v1/{workspace}/{agent}`), the 401 challenge
 * pointing at that resource's metadata, and access-token verification for that audience.
 */
export interface AgentEndpointOAuth {
  resourceOf(req: Request): string | undefined;
  challenge(req: Request): string | undefined;
  isAccessToken(token: string): boolean;
  /**
   * The token's user and scopes (`scopes` capped by the user's role now, `grantedScopes` as
   * issued) when it is live and its audience is `resource`; else undefined.
   */
  verifyAccess(
    token: string,
    resource: string | undefined,
  ): Promise<
    | {
        principal: Principal;
        scopes: readonly string[];
        grantedScopes: readonly string[];
        /** The agent's sign-in mode when the token was issued (`dsm`). */
        signInMode?: string | undefined;
        clientId: string;
      }
    | undefined
  >;
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
 * `agent`), before any MCP handling:
 * 1. resolves the address to a published agent's catalog, else 404
 *    `resource_not_found` without saying which part was unknown (so a wrong
 *    address is a 404 whatever the credential);
 * 2. accepts a live key of this agent (`Authorization: Bearer
 *    dagu_agent_…`, or `?token=` with no header), or, unless the agent's
 *    sign-in policy is `keys`, an OAuth access token for the agent's URL
 *    whose person the policy admits (a person it does not
 *    admit is 403 `unauthorized` saying why): a user's API key, login token,
 *    Basic credential or another agent's key is 401 with `WWW-Authenticate`
 *    (the OAuth challenge only when OAuth is on for the agent), audited as
 *    `mcp.request.denied`.
 * On success the request's principal is the agent: credential type `agent_key`
 * for a key; `oauth` with `onBehalfOf` the person, and `role` the ceiling of
 * their authority, for a token.
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

/** The principal of a person signed in to the agent with OAuth, or why they may not use it. */
async function oauthPrincipal(
  deps: AgentEndpointDeps,
  catalog: AgentCatalog,
  req: Request,
  bearer: string | undefined,
): Promise<Principal | { refused: string; person: Principal } | undefined> {
  const { agent } = catalog;
  // A `keys` agent offers no OAuth: its tokens are not even looked at.
  if (bearer === undefined || deps.oauth === undefined || agent.signIn.mode === 'keys') return undefined;
  if (!deps.oauth.isAccessToken(bearer)) return undefined;
  // An OAuth access token counts only when its audience is this agent's own URL.
  const verified = await deps.oauth.verifyAccess(bearer, deps.oauth.resourceOf(req) ?? 'no-resource');
  // A token issued under another sign-in mode is not this agent's any more (a switched
  // policy changes whose authority a person acts with, so it needs a new consent).
  if (verified === undefined || verified.signInMode !== agent.signIn.mode) return undefined;
  const person = {
    userId: verified.principal.id.replace(/^user:/, ''),
    username: verified.principal.subject,
    role: verified.principal.role,
  };
  const scopes = agent.signIn.mode === 'delegated' ? verified.grantedScopes : verified.scopes;
  const authority = personAuthority(agent.signIn, person, scopes);
  if (!authority.allowed) return { refused: authority.reason, person: verified.principal };
  return {
    ...agentPrincipal(agent, authority.ceiling),
    credentialType: 'oauth',
    onBehalfOf: authority.onBehalfOf,
  };
}

/** Step 2 of {@link agentGate}: true when the request carries a live key of the agent or an admitted person's token; else answered 401/403. */
async function authenticated(
  deps: AgentEndpointDeps,
  catalog: AgentCatalog,
  req: Request,
  res: Response,
): Promise<boolean> {
  const credential = takeCredential(req);
  const { agent } = catalog;
  const bearer = typeof credential === 'object' && credential.scheme === 'bearer' ? credential.token : undefined;
  const person = await oauthPrincipal(deps, catalog, req, bearer);
  const record =
    person === undefined && bearer !== undefined && isAgentKey(bearer) ? await deps.keys.verify(bearer) : undefined;
  const denied = (status: number, code: string, message: string, who?: Principal): false => {
    deps.audit({
      category: 'mcp',
      action: 'mcp.request.denied',
      // A signed-in person the policy refuses is named (not unauthenticated traffic).
      principal: who,
      target: `${req.method} ${req.baseUrl}`,
      outcome: 'denied',
      requestId: requestIdOf(res),
      details: { code, status, agent: `${agent.workspace}/${agent.slug}` },
    });
    res.status(status).json({ code, message });
    return false;
  };
  if (person !== undefined && 'refused' in person) return denied(403, 'unauthorized', person.refused, person.person);
  if (person === undefined && (record === undefined || record.agentId !== agent.id)) {
    // The OAuth challenge only where OAuth sign-in is on for this agent.
    const oauthChallenge = agent.signIn.mode === 'keys' ? undefined : deps.oauth?.challenge(req);
    res.setHeader('WWW-Authenticate', oauthChallenge === undefined ? [CHALLENGE] : [oauthChallenge, CHALLENGE]);
    return denied(
      401,
      'unauthenticated',
      credential === undefined
        ? 'Authentication is required: send a key of this agent as a Bearer token.'
        : 'The credential is not a valid key of this agent.',
    );
  }
  // A key acts as the agent, bounded by its catalog and its authors' roles; a person acts as the
  // agent for themselves, further capped by their authority (docs/agents.md "Signing in to an agent").
  const principal = person ?? agentPrincipal(agent);
  res.locals.principal = principal;
  (req as Request & { auth?: unknown }).auth = { token: '', clientId: principal.id, scopes: [], extra: { principal } };
  return true;
}
