import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RequestSchema,
  type CallToolResult,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ANONYMOUS_PRINCIPAL, PrincipalSchema, type Principal } from '@dagu-mcp/contracts';
import { z } from 'zod';
import { TOOL_DEFINITIONS } from './tools/tool-definitions';
import { toMcpError } from './mcp-errors';
import type { AuditEvent } from '../audit/audit-log';
import { DaguError } from '@dagu-mcp/contracts';

/** What a tool or resource handler learns about the request it serves. */
export interface McpCallContext {
  readonly principal: Principal;
  /** Aborted when the client cancels the request or the session ends. */
  readonly signal: AbortSignal;
  readonly sessionId: string | undefined;
  /** The request's progress token, when the client sent one. */
  readonly progressToken: string | number | undefined;
  /** Sends a notification related to this request (progress). */
  readonly notify: (notification: ServerNotification) => Promise<void>;
}

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

/** Server `instructions` (dagu-model §8): one paragraph. */
export const SERVER_INSTRUCTIONS =
  'Dagu runs DAG workflows. Read DAGs, runs, logs, wiki pages and the reference topics with dagu_read ' +
  '(start with {"target":"reference"}); validate a DAG with dagu_change in preview mode before writing it with mode=apply; ' +
  'start, enqueue, retry and stop runs with dagu_execute; follow a run with wait=true, by subscribing to its dagu://runs URI, ' +
  'or by reading it again with dagu_read.';

/**
 * `tools/call` with `arguments` of any JSON type. The SDK's stock schema
 * rejects non-object arguments with -32602 before a handler runs; 021/022/036
 * require an `isError` result with `invalid_tool_input` instead (dagu-model §10).
 */
const LooseCallToolRequestSchema = RequestSchema.extend({
  method: z.literal('tools/call'),
  params: z.looseObject({ name: z.string(), arguments: z.unknown().optional(), _meta: z.looseObject({}).optional() }),
});

/**
 * Builds one MCP `Server` for one session, wired to `handlers`.
 *
 * @param version the gateway's version string, reported in `serverInfo`
 */
export function createMcpServer(handlers: McpHandlers, version: string): Server {
  const server = new Server(
    { name: 'dagu-mcp', title: 'Dagu MCP', version },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: SERVER_INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...TOOL_DEFINITIONS] }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: handlers.listResources() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: handlers.listResourceTemplates() }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const ctx = contextOf(extra, request.params._meta?.progressToken);
    const audit = auditor(handlers, ctx, 'mcp.resource.read', request.params.uri);
    try {
      const result = await handlers.readResource(request.params.uri, ctx);
      audit(undefined);
      return result;
    } catch (err) {
      audit(err instanceof DaguError ? err.code : 'internal_error');
      throw toMcpError(err, { resourceUri: request.params.uri, operation: 'resources/read' });
    }
  });
  // Registered on Protocol directly: Server.setRequestHandler would wrap it in
  // the stock CallToolRequestSchema check that we must not apply (see above).
  Protocol.prototype.setRequestHandler.call(server, LooseCallToolRequestSchema, async (request, extra) => {
    const tool = handlers.tools[request.params.name];
    if (tool === undefined) {
      throw toMcpError(new Error(`Unknown tool: ${request.params.name}`), { invalidParams: true });
    }
    const ctx = contextOf(extra, progressTokenOf(request.params._meta));
    const audit = auditor(handlers, ctx, 'mcp.tool_call', describeCall(request.params.name, request.params.arguments));
    const result = await tool(request.params.arguments, ctx);
    const code = result.isError ? result.structuredContent?.code : undefined;
    audit(result.isError ? (typeof code === 'string' ? code : 'internal_error') : undefined);
    return result;
  });
  return server;
}

/**
 * Records `<prefix>.received` now and returns the function that records the
 * outcome: `succeeded`, `denied` (code `unauthorized`) or `failed` (with the code).
 */
function auditor(handlers: McpHandlers, ctx: McpCallContext, prefix: string, target: string): (errorCode: string | undefined) => void {
  const started = performance.now();
  const base = { category: 'mcp', principal: ctx.principal, target, details: { sessionId: ctx.sessionId } };
  handlers.audit({ ...base, action: `${prefix}.received`, outcome: 'received' });
  return (errorCode) => {
    const outcome = errorCode === undefined ? 'succeeded' : errorCode === 'unauthorized' ? 'denied' : 'failed';
    handlers.audit({
      ...base,
      action: `${prefix}.${outcome}`,
      outcome,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      details: errorCode === undefined ? base.details : { ...base.details, code: errorCode },
    });
  };
}

/** `dagu_read:dag_spec:nightly`-style audit target from the tool name and its non-secret selector fields. */
function describeCall(tool: string, args: unknown): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return tool;
  const record: Record<string, unknown> = { ...args };
  const parts = ['target', 'action', 'mode', 'name', 'uri', 'dagRunId'].map((k) => record[k]).filter((v): v is string => typeof v === 'string');
  return [tool, ...parts].join(':').slice(0, 500);
}

function progressTokenOf(meta: Record<string, unknown> | undefined): string | number | undefined {
  const token = meta?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function contextOf(
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  progressToken: string | number | undefined,
): McpCallContext {
  const carried = PrincipalSchema.safeParse(extra.authInfo?.extra?.principal);
  return {
    principal: carried.success ? carried.data : ANONYMOUS_PRINCIPAL,
    signal: extra.signal,
    sessionId: extra.sessionId,
    progressToken,
    notify: (n) => extra.sendNotification(n),
  };
}
