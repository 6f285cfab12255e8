import { SpanKind, withSpan } from '@dagu-mcp/runtime';
import { SetLevelRequestParamsSchema } from '@modelcontextprotocol/sdk/types.js';
import { completionMethods, type CompletionSource } from './completion/completion';
import type { ExtensionRouter } from './extensions/extension-router';
import { initializeResult, LooseCallToolParamsSchema, toolMethods } from './mcp-server';
import type { McpHandlers } from './mcp-types';
import { promptMethods } from './prompts/prompt-catalog';
import { resourceMethods } from './resource-methods';
import { parseParams, type McpDispatcher, type MethodCall, type MethodHandler } from './transport/dispatcher';
import { JsonRpcError, METHOD_NOT_FOUND } from './transport/protocol';
import type { SessionStore } from './transport/session-store';
import { paramHeadersOf } from './transport/param-headers';
import { TOOL_DEFINITIONS } from './tools/tool-definitions';
import type { TaskCallRunner } from './task-calls';
import { offersTool } from './tools/tool-access';

/** What the dispatcher is built from. */
export interface DispatcherDeps {
  readonly handlers: McpHandlers;
  readonly sessions: SessionStore;
  /** The gateway's version, reported in `serverInfo`. */
  readonly version: string;
  readonly completions?: CompletionSource;
  /** Enabled MCP extensions (`mcp-extension.ts` in contracts); absent or empty in production. */
  readonly extensions?: ExtensionRouter;
  /** The tasks extension's methods (task-methods.ts, mcp-revisions §4); absent: the endpoint serves no tasks. */
  readonly tasks?: Readonly<Record<string, MethodHandler>>;
  /** Runs task-capable extension tools as tasks (task-calls.ts); with `tasks`. */
  readonly taskCalls?: TaskCallRunner;
}

/**
 * Builds the gateway's JSON-RPC dispatcher (the interface the transport runs:
 * transport/dispatcher.ts). Methods: `ping`, `logging/setLevel`, `tools/list`,
 * `tools/call`, `resources/list`, `resources/templates/list`,
 * `resources/read`, `resources/subscribe`, `resources/unsubscribe`,
 * `prompts/list`, `prompts/get`, `completion/complete`, and with `deps.tasks`
 * `tasks/get`, `tasks/update`, `tasks/cancel`.
 */
export function createMcpDispatcher(deps: DispatcherDeps): McpDispatcher {
  const { handlers, sessions, extensions } = deps;
  const table = new Map<string, MethodHandler>(
    Object.entries({
      ping: async () => ({}),
      'logging/setLevel': async (params: unknown, { session }: MethodCall) => {
        const { level } = parseParams(
          SetLevelRequestParamsSchema,
          params,
          'logging/setLevel needs a level (debug … emergency)',
        );
        await sessions.setLogLevel(session.id, level);
        return {};
      },
      ...toolMethods({ handlers, extensions, ...(deps.taskCalls !== undefined ? { taskCalls: deps.taskCalls } : {}) }),
      ...resourceMethods({ handlers, sessions, extensions }),
      ...promptMethods(extensions),
      ...completionMethods({ handlers, source: deps.completions, extensions }),
      ...(deps.tasks ?? {}),
    }),
  );
  // SEP-2243: the built-in tools' `x-mcp-header` parameters, read once from their definitions.
  const paramHeaders = new Map(TOOL_DEFINITIONS.map((tool) => [tool.name, paramHeadersOf(tool.inputSchema)]));
  return {
    ...(deps.tasks !== undefined ? { servesTasks: true } : {}),
    paramHeaders: (toolName, principal) => (offersTool(principal, toolName) ? (paramHeaders.get(toolName) ?? []) : []),
    initializeResult: (protocolVersion, clientCapabilities) =>
      initializeResult(protocolVersion, deps.version, clientCapabilities),
    handle: async (method, params, call) => {
      const handler = table.get(method);
      if (handler === undefined) throw new JsonRpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
      // One SERVER span per MCP request; its bus calls continue the trace into the services.
      const target = spanTarget(method, params);
      return withSpan(
        target === undefined ? `mcp ${method}` : `mcp ${method} ${target}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'mcp.method.name': method, ...(target !== undefined ? { 'mcp.target': target } : {}) },
        },
        () => handler(params, call),
      );
    },
    wantsStream: async (method, params, client) => {
      if (method !== 'tools/call') return false;
      const parsed = LooseCallToolParamsSchema.safeParse(params);
      if (!parsed.success) return false;
      if (parsed.data._meta?.progressToken !== undefined) return true;
      // A waiting dagu_execute may ask the person about a checkpoint on this request's stream.
      const args = parsed.data.arguments;
      const waits = typeof args === 'object' && args !== null && 'wait' in args && args.wait === true;
      if (client.canElicit && parsed.data.name === 'dagu_execute' && waits) return true;
      return (
        handlers.tools[parsed.data.name] === undefined && (await extensions?.toolOwner(parsed.data.name)) !== undefined
      );
    },
  };
}

/** The tool name of a `tools/call`, the URI of a `resources/read` (else undefined), for span names. */
function spanTarget(method: string, params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const key = method === 'tools/call' ? 'name' : method === 'resources/read' ? 'uri' : undefined;
  if (key === undefined || !(key in params)) return undefined;
  const value: unknown = Object.getOwnPropertyDescriptor(params, key)?.value;
  return typeof value === 'string' ? value.slice(0, 200) : undefined;
}
