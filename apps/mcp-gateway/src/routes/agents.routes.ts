import type { Request, Response } from 'express';
import { z } from 'zod';
import {
  AgentBindingSchema,
  AgentSignInSchema,
  AgentSlugSchema,
  AgentStateSchema,
  AGENT_TOOLS_MAX,
  AgentToolNameSchema,
  DaguError,
  withoutReadOnlyBindingFields,
  isValidWikiWorkspace,
  type Agent,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { AuditLog } from '../audit/audit-log';
import type { AgentKeyRecord, AgentKeyRepository } from '../auth/agent-key.repository';
import type { ApiKeyVerifier } from '../auth/api-key-cache';
import { principalOf } from '../http/principal';
import { requestIdOf } from '../http/request-id';
import type { RestRoutes } from '../http/rest-router';
import type { RouteAction } from '../actions/route-roles';
import {
  createAgent,
  deleteAgent,
  deleteAgentTool,
  getAgent,
  listAgents,
  putAgentTool,
  setAgentTools,
  updateAgent,
} from '../actions/agent.actions';
import { agentEndpointUrl } from '../agents/agent-path';
import { parseRequest } from './parse-body';
import { uuidParam } from './path-params';

const CreateAgentSchema = z.strictObject({
  slug: AgentSlugSchema,
  title: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
  state: AgentStateSchema.optional(),
  signIn: AgentSignInSchema.optional(),
});
const PatchAgentSchema = z
  .strictObject({
    title: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    state: AgentStateSchema.optional(),
    signIn: AgentSignInSchema.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of title, description, state, signIn');
const PutToolsSchema = z.strictObject({
  tools: z.array(AgentBindingSchema).max(AGENT_TOOLS_MAX),
  version: z.number().int().optional().describe('read-only (what a read returned): accepted and ignored'),
});

/**
 * The fields an agent read returns that no write changes (docs/decisions.md "Admin APIs that round-trip"): a PATCH with a
 * read's body accepts and ignores them. `tools` changes only through `…/tools`; the path, not
 * `workspace`/`slug`, names the agent.
 */
const AGENT_READ_ONLY_FIELDS = [
  'id',
  'workspace',
  'slug',
  'version',
  'toolCount',
  'createdAt',
  'updatedAt',
  'createdBy',
  'updatedBy',
  'endpoint',
  'tools',
] as const;

/** `body` without the fields named (when it is an object); anything else unchanged. */
function without(body: unknown, fields: readonly string[]): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([key]) => !fields.includes(key)));
}

/** A catalog write's body with each binding's read-only fields (`toolName`, `createdBy`, `createdAt`) dropped. */
function withoutStoredFields(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || !('tools' in body) || !Array.isArray(body.tools)) return body;
  return { ...body, tools: body.tools.map(withoutReadOnlyBindingFields) };
}
const CreateKeySchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});

/** What the agent routes need. */
export interface AgentRouteDeps {
  readonly bus: BusClient;
  readonly keys: AgentKeyRepository;
  readonly verifier: ApiKeyVerifier<AgentKeyRecord>;
  readonly audit: AuditLog;
  /** Tells every gateway replica that an agent changed (`AgentCatalogCache.announce`); the actions call it. */
  readonly announce: (workspace: string, slug: string) => Promise<void>;
  readonly basePath: string;
  /**
   * `PUBLIC_URL` (trailing slashes dropped), the base of each answer's `endpoint`; absent: the origin the request reached plus
   * `BASE_PATH` (behind a proxy: per `TRUST_PROXY`; docs/decisions.md "Admin APIs that round-trip").
   */
  readonly publicUrl?: string;
}

function workspaceParam(value: unknown): string {
  const ws = String(value);
  if (ws === 'all' || !isValidWikiWorkspace(ws))
    throw new DaguError('invalid_request', `Not a valid workspace name: ${ws}.`, { field: 'workspace' });
  return ws;
}

function slugParam(value: unknown): string {
  const parsed = AgentSlugSchema.safeParse(String(value));
  if (!parsed.success)
    throw new DaguError('invalid_request', 'agent: must match ^[a-z0-9][a-z0-9-]{0,39}$', { field: 'agent' });
  return parsed.data;
}

function toolNameParam(value: unknown): string {
  const parsed = AgentToolNameSchema.safeParse(String(value));
  if (!parsed.success)
    throw new DaguError('invalid_request', 'toolName: must match ^[A-Za-z0-9_.-]{1,64}$', { field: 'toolName' });
  return parsed.data;
}

const refOf = (req: Request): { workspace: string; slug: string } => ({
  workspace: workspaceParam(req.params.ws),
  slug: slugParam(req.params.agent),
});

function keyView(record: AgentKeyRecord): Record<string, unknown> {
  return {
    id: record.id,
    prefix: record.prefix,
    name: record.name,
    expiresAt: record.expiresAt,
    createdAt: record.createdAt,
    createdBy: record.createdBy,
    lastUsedAt: record.lastUsedAt,
  };
}

/**
 * Published agents over REST, `manager` and up
 * (dagu-model §9): agents of a workspace, one agent (with `endpoint`, its
 * MCP endpoint's absolute URL), its catalog (whole, or one binding by tool name), and its keys.
 * A read's body is accepted back by the write, read-only fields ignored (docs/decisions.md "Admin APIs that round-trip"). Agent and catalog changes are the
 * agent actions (agent-service records them in the audit trail; the action
 * announces them to every gateway replica); keys live here, in the gateway's
 * agent-key repository, shown once, audited as `agent_key.*`.
 */
export function agentRoutes(deps: AgentRouteDeps): RestRoutes {
  const { bus } = deps;
  const announcing = { announce: deps.announce };
  const base = '/workspaces/:ws/agents';
  const originOf = (req: Request): string =>
    deps.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}${deps.basePath}`;
  const withEndpoint =
    (req: Request) =>
    <A extends Agent>(agent: A): A & { endpoint: string } => ({
      ...agent,
      endpoint: agentEndpointUrl(originOf(req), agent.workspace, agent.slug),
    });
  const auditKey = (res: Response, action: string, target: string, details: Record<string, unknown>): void =>
    deps.audit.record({
      category: 'agent_key',
      action,
      principal: principalOf(res),
      target,
      outcome: 'succeeded',
      requestId: requestIdOf(res),
      details,
    });
  const spec = (action: RouteAction, summary: string, extra: Record<string, unknown> = {}) => ({
    action,
    summary,
    tag: 'agents',
    ...extra,
  });
  return (routes) => {
    routes.get(base, spec('agent.list', 'List the agents of a workspace'), async (req, res) => {
      const workspace = workspaceParam(req.params.ws);
      const reply = await listAgents(bus, principalOf(res), { workspace });
      res.json({ items: reply.items.map(withEndpoint(req)) });
    });
    routes.post(
      base,
      spec('agent.create', 'Create an agent (state draft unless given)', { body: CreateAgentSchema, status: 201 }),
      async (req, res) => {
        const workspace = workspaceParam(req.params.ws);
        const body = parseRequest(CreateAgentSchema, req.body);
        const agent = await createAgent(bus, principalOf(res), { workspace, ...body }, announcing);
        res.status(201).json(withEndpoint(req)(agent));
      },
    );
    routes.get(`${base}/:agent`, spec('agent.get', 'One agent with its catalog'), async (req, res) => {
      res.json(withEndpoint(req)(await getAgent(bus, principalOf(res), refOf(req))));
    });
    routes.patch(
      `${base}/:agent`,
      spec(
        'agent.update',
        'Change an agent: title, description, state (draft, published, disabled), signIn ({mode: keys | own_role | delegated, roles?, users?}; docs/agents.md "Signing in to an agent"). A read\'s other fields (id, workspace, slug, version, toolCount, createdAt, updatedAt, createdBy, updatedBy, endpoint, tools) are accepted and ignored',
        {
          body: PatchAgentSchema,
        },
      ),
      async (req, res) => {
        const ref = refOf(req);
        const body = parseRequest(PatchAgentSchema, without(req.body, AGENT_READ_ONLY_FIELDS));
        const agent = await updateAgent(bus, principalOf(res), { ...ref, ...body }, announcing);
        res.json(withEndpoint(req)(agent));
      },
    );
    routes.delete(
      `${base}/:agent`,
      spec('agent.delete', 'Delete an agent and its catalog', { status: 204 }),
      async (req, res) => {
        await deleteAgent(bus, principalOf(res), refOf(req), announcing);
        res.status(204).end();
      },
    );
    routes.get(`${base}/:agent/tools`, spec('agent.get', "An agent's catalog"), async (req, res) => {
      const agent = await getAgent(bus, principalOf(res), refOf(req));
      res.json({ tools: agent.tools, version: agent.version });
    });
    routes.put(
      `${base}/:agent/tools`,
      spec(
        'agent.setTools',
        "Replace an agent's catalog (tool names unique per agent). A catalog read is accepted unchanged: each binding's toolName, createdBy and createdAt and the catalog's version are ignored",
        { body: PutToolsSchema },
      ),
      async (req, res) => {
        const ref = refOf(req);
        const { tools } = parseRequest(PutToolsSchema, withoutStoredFields(req.body));
        const agent = await setAgentTools(bus, principalOf(res), { ...ref, tools }, announcing);
        res.json({ tools: agent.tools, version: agent.version });
      },
    );
    routes.put(
      `${base}/:agent/tools/:toolName`,
      spec(
        'agent.setTools',
        "Add one binding to an agent's catalog, or replace the one of that tool name (a binding without name is given the path's); a read binding is accepted unchanged",
        { body: AgentBindingSchema },
      ),
      async (req, res) => {
        const ref = refOf(req);
        const toolName = toolNameParam(req.params.toolName);
        const binding = parseRequest(AgentBindingSchema, withoutReadOnlyBindingFields(req.body));
        const agent = await putAgentTool(bus, principalOf(res), { ...ref, toolName, binding }, announcing);
        res.json({ tools: agent.tools, version: agent.version });
      },
    );
    routes.delete(
      `${base}/:agent/tools/:toolName`,
      spec('agent.setTools', "Remove one binding from an agent's catalog", { status: 204 }),
      async (req, res) => {
        const ref = refOf(req);
        await deleteAgentTool(
          bus,
          principalOf(res),
          { ...ref, toolName: toolNameParam(req.params.toolName) },
          announcing,
        );
        res.status(204).end();
      },
    );
    routes.get(
      `${base}/:agent/keys`,
      spec('agentKeys.list', "An agent's live keys (never the keys themselves)"),
      async (req, res) => {
        const agent = await getAgent(bus, principalOf(res), refOf(req));
        res.json({ items: (await deps.keys.listForAgent(agent.id)).map(keyView) });
      },
    );
    routes.post(
      `${base}/:agent/keys`,
      spec('agentKeys.create', 'Create an agent key (dagu_agent_…, shown only in this response)', {
        body: CreateKeySchema,
        status: 201,
      }),
      async (req, res) => {
        const ref = refOf(req);
        const body = parseRequest(CreateKeySchema, req.body);
        const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt);
        if (expiresAt !== null && expiresAt.getTime() <= Date.now())
          throw new DaguError('invalid_request', 'expiresAt: must be in the future', { field: 'expiresAt' });
        const agent = await getAgent(bus, principalOf(res), ref);
        const { record, key } = await deps.keys.create({
          agentId: agent.id,
          workspace: ref.workspace,
          agentSlug: ref.slug,
          name: body.name,
          expiresAt,
          createdBy: principalOf(res).subject,
        });
        auditKey(res, 'agent_key.created', record.id, { agent: `${ref.workspace}/${ref.slug}` });
        const { lastUsedAt: _unused, ...shown } = keyView(record);
        res.status(201).json({ ...shown, key, endpoint: agentEndpointUrl(originOf(req), ref.workspace, ref.slug) });
      },
    );
    routes.delete(
      `${base}/:agent/keys/:keyId`,
      spec('agentKeys.revoke', 'Revoke an agent key on every replica at once', { status: 204 }),
      async (req, res) => {
        const ref = refOf(req);
        const keyId = uuidParam(req.params.keyId, 'keyId');
        const agent = await getAgent(bus, principalOf(res), ref);
        const prefix = await deps.keys.revoke(agent.id, keyId);
        if (prefix === undefined) throw new DaguError('resource_not_found', 'Agent key not found.', { field: 'keyId' });
        await deps.verifier.invalidate(prefix);
        auditKey(res, 'agent_key.revoked', keyId, { agent: `${ref.workspace}/${ref.slug}` });
        res.status(204).end();
      },
    );
  };
}
