import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { requiredRoleOf, SYSTEM_PRINCIPAL, type StoredBinding } from '@dagu-mcp/contracts';
import { callOperation, getOperationTool } from '../actions/operation.actions';
import { asServiceError, toolError } from '../mcp/tools/tool-result';
import { asAuthor, type AgentTool, type AgentToolDeps } from './agent-tool-base';

/** A `rest_operation` binding of a catalog. */
export type RestOperationBinding = Extract<StoredBinding, { kind: 'rest_operation' }>;

/**
 * A published REST operation as a tool: the definition
 * comes from agent-service (`operation.tool`: the bound published version, or
 * the newest published one for `latest`; a draft is never served), and a
 * call is forwarded to agent-service (`operation.call`), which validates the
 * input, calls the upstream with its credential through the SSRF guard and
 * answers the tool result. The gateway never sees the credential, and the
 * caller's own key or token is never forwarded: only the arguments travel.
 * The call runs as the agent with its binding author's current role
 * (`operator` needed: `callOperation` checks it, agent-service again); a
 * refusal or a failed call is the tool's error result.
 *
 * @returns undefined when the operation has no such published version (left out of `tools/list` until a refresh finds one)
 */
export async function createRestOperationTool(
  binding: RestOperationBinding,
  workspace: string,
  deps: AgentToolDeps,
): Promise<AgentTool | undefined> {
  const ref = { workspace, name: binding.operation, version: binding.version };
  // The gateway builds catalogs as its system principal (a viewer, enough for `operation.tool`).
  const tool = await getOperationTool(deps.bus, SYSTEM_PRINCIPAL, ref).catch((err: unknown) => {
    const code = asServiceError(err).code;
    deps.logger.warn({ workspace, operation: binding.operation, code }, 'agent REST tool left out of the catalog');
    return undefined;
  });
  if (tool === undefined) return undefined;
  const title = binding.title ?? tool.title;
  const definition: Tool = {
    name: binding.toolName,
    title,
    description: binding.description ?? tool.description,
    inputSchema: { ...tool.inputSchema, type: 'object' },
    annotations: { ...tool.annotations, title },
  };
  const call = asAuthor(binding, deps, async (args, ctx): Promise<CallToolResult> => {
    const input: Record<string, unknown> =
      typeof args === 'object' && args !== null && !Array.isArray(args) ? { ...args } : {};
    try {
      const reply = await callOperation(
        deps.bus,
        ctx.principal,
        { ...ref, arguments: input },
        tool.callTimeoutMs !== undefined ? { timeoutMs: tool.callTimeoutMs } : {},
      );
      return { isError: reply.isError, content: reply.content, structuredContent: reply.structuredContent };
    } catch (err) {
      return toolError(asServiceError(err), { operation: binding.operation });
    }
  });
  return { definition, call, minRole: requiredRoleOf('operation.call') };
}
