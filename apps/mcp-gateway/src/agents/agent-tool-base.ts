import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, type Principal, type Role, type StoredBinding } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { ExtensionRouter } from '../mcp/extensions/extension-router';
import type { McpCallContext, ToolHandler } from '../mcp/mcp-types';
import { toolError } from '../mcp/tools/tool-result';

/** One tool of an agent's catalog: what `tools/list` shows and what `tools/call` runs. */
export interface AgentTool {
  readonly definition: Tool;
  readonly call: ToolHandler;
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

/** The principal an agent acts as (issue 24: "carrying the agent as the principal"); `role` is set per call. */
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
 * Runs `call` as the agent with its binding author's current role (issue 24
 * item 4: bindings ∩ the author's role now). An author who holds no role any
 * more (deleted user, revoked key) leaves the tool refused (`unauthorized`).
 * The call context's `currentPrincipal` looks the role up again, so a
 * checkpoint answered in the client minutes later (issue 22 §2) is decided
 * with the author's role at that moment.
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
      return { ...ctx.principal, role: now };
    };
    return call(args, { ...ctx, principal: { ...ctx.principal, role }, currentPrincipal });
  };
}
