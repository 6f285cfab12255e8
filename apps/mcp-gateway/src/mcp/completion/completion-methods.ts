import { CompleteRequestParamsSchema, CompleteResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { MethodHandler, McpHandlers } from '../mcp-server';
import type { ExtensionRouter } from '../extensions/extension-router';
import { hasPrompt } from '../prompts/prompt-catalog';
import { parseParams } from '../resource-methods';
import { INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError } from '../transport/protocol';
import type { CompletionSource } from './completion';

/** What `completion/complete` is built from. */
export interface CompletionMethodDeps {
  readonly handlers: McpHandlers;
  readonly source: CompletionSource | undefined;
  readonly extensions: ExtensionRouter | undefined;
}

/**
 * `completion/complete` (MCP server/utilities/completion): a `ref/prompt`
 * naming one of the gateway's prompts, or a `ref/resource` naming one of its
 * `dagu://` templates, is answered by {@link CompletionSource}; a prompt or
 * template of an enabled extension is relayed to it; anything else is -32602.
 * Result: `{completion: {values (≤ 100), total, hasMore}}`.
 */
export function completionMethods(deps: CompletionMethodDeps): Record<string, MethodHandler> {
  return {
    'completion/complete': async (params, { ctx, session }) => {
      const request = parseParams(CompleteRequestParamsSchema, params, 'completion/complete needs a ref and an argument {name, value}');
      const ref = request.ref;
      const ours = ref.type === 'ref/prompt' ? hasPrompt(ref.name) : deps.handlers.listResourceTemplates().some((t) => t.uriTemplate === ref.uri);
      if (ours) {
        const completion = deps.source === undefined ? { values: [], total: 0, hasMore: false } : await deps.source(request, ctx.principal);
        return { completion };
      }
      const owner = ref.type === 'ref/prompt' ? await deps.extensions?.promptOwner(ref.name) : await deps.extensions?.uriOwner(ref.uri);
      if (owner === undefined) {
        const what = ref.type === 'ref/prompt' ? `prompt ${ref.name}` : `resource template ${ref.uri}`;
        throw new JsonRpcError(INVALID_PARAMS, `Invalid params: no completions for unknown ${what}.`);
      }
      const relayed = CompleteResultSchema.safeParse(await deps.extensions?.call(owner, 'completion/complete', { ...request }, ctx, session.clientCapabilities));
      if (!relayed.success) throw new JsonRpcError(INTERNAL_ERROR, 'Completion came back malformed.');
      return relayed.data;
    },
  };
}
