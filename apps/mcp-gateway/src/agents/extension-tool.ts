import { ToolSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, roleAtLeast, type StoredBinding } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import type { ExtensionRouter } from '../mcp/extensions/extension-router';
import { callExtensionTool } from '../mcp/extensions/extension-tool-call';
import { watchExtensionTools } from '../mcp/extensions/tool-list-watcher';
import { toolError } from '../mcp/tools/tool-result';
import type { AgentCatalogCache } from './agent-catalog-cache';
import { asAuthor, type AgentTool, type AgentToolDeps } from './agent-tool-base';

/** An `extension_tool` binding as stored. */
type ExtensionBinding = Extract<StoredBinding, { kind: 'extension_tool' }>;

/** A `resource_unavailable` result naming the extension (`details.extension`), as on `/mcp`. */
function unavailable(extension: string, message: string): CallToolResult {
  return toolError(new DaguError('resource_unavailable', message, { details: { extension } }).toServiceError());
}

/**
 * An extension service's tool in an agent's catalog, or undefined while
 * the tool is not served (extension not enabled, tool not in its `allowedTools`, service not
 * announcing it, or a malformed definition): the catalog leaves it out until a rebuild finds
 * it, and a rebuild runs whenever the served extension tools change
 * ({@link watchBoundExtensions}).
 *
 * The definition is the extension's own (input schema, annotations) under the binding's
 * name, title and description. A call, with the same rules as on `/mcp`
 * (extension-tool-call.ts): the binding author's current role (`asAuthor`)
 * must reach the tool's `minRole` (else `unauthorized`, `details.restriction: "author"`);
 * the extension must still serve the tool (else `resource_unavailable` naming it — the
 * catalog a session listed may be a second old); then input validation against the
 * published schema, the call deadline and `resource_unavailable` for a failing service.
 * The extension sees the agent's principal with the author's role, never a credential.
 */
export async function extensionTool(binding: ExtensionBinding, deps: AgentToolDeps): Promise<AgentTool | undefined> {
  const router = deps.extensions;
  if (router === undefined) return undefined;
  const served = await router.namespacedTool(binding.service, binding.tool);
  if (served === undefined) return undefined;
  const parsed = ToolSchema.safeParse({ inputSchema: { type: 'object' }, ...served.definition });
  if (!parsed.success) {
    deps.logger.warn(
      { extension: binding.service, tool: binding.tool },
      'extension tool definition is not an MCP tool',
    );
    return undefined;
  }
  const base = parsed.data;
  const title = binding.title ?? base.title ?? base.annotations?.title;
  const definition: Tool = {
    ...base,
    name: binding.toolName,
    ...(title !== undefined ? { title } : {}),
    ...(binding.description !== undefined || base.description !== undefined
      ? { description: binding.description ?? base.description }
      : {}),
    ...(base.annotations !== undefined || title !== undefined
      ? { annotations: { ...base.annotations, ...(title !== undefined ? { title } : {}) } }
      : {}),
  };
  const call = asAuthor(binding, deps, async (args, ctx) => {
    const target = await router.namespacedTool(binding.service, binding.tool);
    if (target === undefined)
      return unavailable(
        binding.service,
        `Extension ${binding.service} does not serve tool ${binding.tool} now (disabled, not allowed, or not running).`,
      );
    if (!roleAtLeast(ctx.principal.role, target.minRole))
      return toolError(
        new DaguError(
          'unauthorized',
          `Tool ${binding.toolName} needs role ${target.minRole} or higher; it was configured by ${binding.createdBy.subject}, whose role is ${ctx.principal.role} now.`,
          { details: { restriction: 'author', minRole: target.minRole } },
        ).toServiceError(),
      );
    const meta = ctx.progressToken !== undefined ? { _meta: { progressToken: ctx.progressToken } } : {};
    // Agent sessions relay no client capabilities: the gateway still answers an extension's
    // server→client request only when the client declared the capability (ctx.sendRequest).
    return callExtensionTool(router, target, { name: binding.toolName, arguments: args, ...meta }, ctx, {});
  });
  return { definition, call };
}

/**
 * Rebuilds, on this replica, the cached catalogs of agents that bind extension tools
 * whenever the served extension tools change (an extension enabled, disabled, narrowed,
 * started or stopped): a tool that is no longer served leaves their `tools/list` within
 * about a second and their live sessions get `notifications/tools/list_changed`
 * (wiring/agent-setup.ts), without waiting for `AGENT_CATALOG_REFRESH_MS`.
 *
 * @returns stops watching
 */
export function watchBoundExtensions(router: ExtensionRouter, cache: AgentCatalogCache, logger: Logger): () => void {
  return watchExtensionTools(
    router,
    () => cache.refreshWhere((agent) => agent.tools.some((t) => t.kind === 'extension_tool')),
    logger,
  );
}
