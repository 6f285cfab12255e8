import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What `Client.callTool` resolves to: a tool result, or the pre-2024-11-05 `{ toolResult }` form. */
export type AnyCallToolResult = Awaited<ReturnType<Client['callTool']>>;

/**
 * Narrows a `callTool` answer to the tool result our server sends (`content`, `structuredContent`,
 * `isError`, MCP 2025-06-18 tools/call). Throws when the server answered in the old `toolResult`
 * form, which it never does, so a test that relies on it fails loudly instead of reading `undefined`.
 */
export function toolResult(result: AnyCallToolResult): CallToolResult {
  if (!('content' in result)) throw new Error(`not a tool result: ${JSON.stringify(result)}`);
  return result as CallToolResult;
}

/** The text of one `resources/read` content entry; throws when it is a blob (a test expecting text fails). */
export function textOf(content: { text: string } | { blob: string } | undefined): string {
  if (content === undefined || !('text' in content)) throw new Error('expected a text resource content');
  return content.text;
}
