import type { Principal, Role } from '@dagu-mcp/contracts';

/**
 * What an extension service declares and what its handlers get (wire
 * format: `mcp-extension.ts` in `@dagu-mcp/contracts`; guide: docs/extending.md).
 */

/** A flat JSON Schema of a tool's arguments: an object of named properties (the gateway validates it with ajv). */
export interface FlatInputSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
}

/** MCP tool annotations (hints for clients; the gateway enforces `minRole`, not these). */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** What a handler learns about the call it serves. */
export interface ExtensionCallContext {
  /** Who called (never their credentials): id, subject, role, credential type. */
  readonly principal: Principal;
  /** Epoch ms after which the gateway no longer waits: do not apply a change past it. */
  readonly deadline: number;
  /** Aborted when the caller cancels or the deadline passes. */
  readonly signal: AbortSignal;
  /** The caller's MCP session (empty when none). */
  readonly sessionId: string;
  /** Sends an MCP notification related to the call (e.g. `notifications/message`). */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
  /** Reports progress when the caller sent a progress token (otherwise does nothing). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
}

/** An MCP `CallToolResult` as a handler may return it whole. */
export interface ToolResult {
  readonly content: ReadonlyArray<Record<string, unknown>>;
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** One tool of an extension service. Served by the gateway as `<service>.<name>`. */
export interface ExtensionToolDefinition {
  /** Own name: letters, digits, "_" or "-", at most 64. */
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: FlatInputSchema;
  readonly annotations?: ToolAnnotations;
  /** The least role a caller needs; the gateway refuses others before the call arrives. Default `viewer`. */
  readonly minRole?: Role;
  /**
   * Serves one call with arguments the gateway already validated against `inputSchema`.
   * Return a {@link ToolResult}, or any JSON object (sent as `structuredContent` plus its
   * JSON text). Throw {@link ExtensionToolError} for an `isError` result the caller should
   * see; any other throw is the service failing (the caller gets `resource_unavailable`).
   */
  handle(args: Record<string, unknown>, ctx: ExtensionCallContext): Promise<ToolResult | Record<string, unknown>>;
}

/** One resource of an extension service (its URI must start with one of the service's `uriPrefixes`). */
export interface ExtensionResourceDefinition {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** The resource's text now. */
  readonly read: (ctx: ExtensionCallContext) => Promise<string>;
}

/** One prompt of an extension service. */
export interface ExtensionPromptDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: ReadonlyArray<{
    readonly name: string;
    readonly description?: string;
    readonly required?: boolean;
  }>;
  /** The prompt's user-role text for these arguments. */
  readonly get: (args: Record<string, string>, ctx: ExtensionCallContext) => Promise<string>;
}

/** A tool failure the caller should see as an `isError` result (not a service failure). */
export class ExtensionToolError extends Error {}
