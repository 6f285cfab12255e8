import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, lowerRole, type Principal, type Role, type StoredBinding } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { ExtensionRouter } from '../mcp/extensions/extension-router';
import type { McpCallContext, ToolHandler } from '../mcp/mcp-types';
import { toolError } from '../mcp/tools/tool-result';

/** One tool of an agent's catalog: what `tools/list` shows and what `tools/call` runs. */
export interface AgentTool {
  readonly definition: Tool;
  readonly call: ToolHandler;
  /**
   * The lowest role any call of the tool may succeed with: a person whose
   * authority is below it does not see the tool in `tools/list`. Absent: any role.
   */
  readonly minRole?: Role;
}

/** What an agent's tools are built from. */
export interface AgentToolDeps {
  readonly bus: BusClient;
  /** The gateway's own `dagu_read`, `dagu_change`, `dagu_execute` handlers. */
  readonly daguTools: Readonly<Record<string, ToolHandler>>;
  /** The current role of a binding's author (auth/binding-authority.ts), looked up per call. */
  readonly currentRoleOf: (principalId: string) => Promise<Role | undefined>;
  readonly logger: Logger;
  /** The agents' extension router, for `extension_tool` bindings (extension-tool.ts); absent: none are served. */
  readonly extensions?: ExtensionRouter;
}

/** The principal an agent acts as ("carrying the agent as the principal"); `role` is set per call. */
export function agentPrincipal(
  agent: { id: string; workspace: string; slug: string },
  role: Role = 'viewer',
): Principal {
  return {
    id: `agent:${agent.id}`,
    subject: `agent:${agent.workspace}/${agent.slug}`,
    role,
    credentialType: 'agent_key',
  };
}

/** The refusal of a binding whose author holds no role any more (deleted user, revoked key). */
function authorGone(binding: StoredBinding): DaguError {
  return new DaguError(
    'unauthorized',
    `Tool ${binding.toolName} was configured by ${binding.createdBy.subject}, who no longer holds a role; ask a manager to save the binding again.`,
    { details: { restriction: 'author' } },
  );
}

/**
 * The role a call acts with: the binding author's, and for a person signed in with OAuth
 * (credential type `oauth`) no more than the ceiling the endpoint computed for them
 * (their own role capped by the scopes under `own_role`, the scopes' ceiling under
 * `delegated`), which the endpoint left as the principal's role.
 */
function actingRole(caller: Principal, authorRole: Role): Role {
  return caller.credentialType === 'oauth' ? lowerRole(authorRole, caller.role) : authorRole;
}

/**
 * Runs `call` as the agent with its binding author's current role (bindings ∩ the author's role now), narrowed for a signed-in person
 * ({@link actingRole}). An author who holds no role any
 * more (deleted user, revoked key) leaves the tool refused (`unauthorized`).
 * The call context's `currentPrincipal` looks the role up again, so a
 * checkpoint answered in the client minutes later is decided
 * with the author's role at that moment (still under the person's ceiling).
 */
export function asAuthor(
  binding: StoredBinding,
  deps: Pick<AgentToolDeps, 'currentRoleOf'>,
  call: (args: unknown, ctx: McpCallContext) => Promise<CallToolResult>,
): ToolHandler {
  return async (args, ctx) => {
    const role = await deps.currentRoleOf(binding.createdBy.id);
    if (role === undefined) return toolError(authorGone(binding).toServiceError());
    const currentPrincipal = async (): Promise<Principal> => {
      const now = await deps.currentRoleOf(binding.createdBy.id);
      if (now === undefined) throw authorGone(binding);
      return { ...ctx.principal, role: actingRole(ctx.principal, now) };
    };
    return call(args, {
      ...ctx,
      principal: { ...ctx.principal, role: actingRole(ctx.principal, role) },
      currentPrincipal,
    });
  };
}
