import type {
  CallToolResult,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuditEvent } from '../audit/audit-log';
import type { McpCallContext } from './transport/dispatcher';

/**
 * The types every MCP handler shares: the gateway's handler set, and (named
 * again here for the handlers) what a call knows about its request, which the
 * transport builds and so declares (transport/dispatcher.ts). They live apart
 * from `mcp-server.ts` so that handlers and the extension router can name them
 * without importing the server module (which imports them back).
 */

export type { McpCallContext } from './transport/dispatcher';

/** A tool handler: raw `arguments` (anything, validated by the tool itself) → result. */
export type ToolHandler = (args: unknown, ctx: McpCallContext) => Promise<CallToolResult>;

/** The gateway's MCP behaviour, independent of transport and session handling. */
export interface McpHandlers {
  readonly tools: Readonly<Record<string, ToolHandler>>;
  readonly listResources: () => Resource[];
  readonly listResourceTemplates: () => ResourceTemplate[];
  /** Reads a `dagu://` resource; throws `DaguError` (mapped per dagu-model §10). */
  readonly readResource: (uri: string, ctx: McpCallContext) => Promise<ReadResourceResult>;
  /** Records audit events (dagu-model §8: `mcp.tool_call.*`, `mcp.resource.read.*`). */
  readonly audit: (event: AuditEvent) => void;
}
