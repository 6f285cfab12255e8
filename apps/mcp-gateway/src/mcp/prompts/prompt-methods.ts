import { GetPromptRequestParamsSchema, GetPromptResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { MethodHandler } from '../mcp-server';
import type { ExtensionRouter } from '../extensions/extension-router';
import { parseParams } from '../resource-methods';
import { INTERNAL_ERROR, JsonRpcError } from '../transport/protocol';
import { getPrompt, hasPrompt, listPrompts } from './prompt-catalog';

/**
 * `prompts/list` and `prompts/get` (MCP server/prompts; dagu-model §8): the
 * gateway's five prompts, then those of enabled extensions.
 *
 * `prompts/get` errors: -32602 with the 020 error object as `data` for an
 * unknown prompt or a missing, unknown or malformed argument (prompt-catalog.ts).
 */
export function promptMethods(extensions: ExtensionRouter | undefined): Record<string, MethodHandler> {
  return {
    'prompts/list': async () => {
      const extra = extensions === undefined ? [] : (await extensions.catalogs()).flatMap((c) => c.catalog.prompts);
      return { prompts: [...listPrompts(), ...extra] };
    },
    'prompts/get': async (params, { ctx, session }) => {
      const request = parseParams(GetPromptRequestParamsSchema, params, 'prompts/get needs a name and string arguments');
      if (hasPrompt(request.name)) return getPrompt(request.name, request.arguments);
      const owner = await extensions?.promptOwner(request.name);
      if (owner === undefined) return getPrompt(request.name, request.arguments);
      const relayed = GetPromptResultSchema.safeParse(await extensions?.call(owner, 'prompts/get', { ...request }, ctx, session.clientCapabilities));
      if (!relayed.success) throw new JsonRpcError(INTERNAL_ERROR, `Prompt ${request.name} came back malformed.`);
      return relayed.data;
    },
  };
}
