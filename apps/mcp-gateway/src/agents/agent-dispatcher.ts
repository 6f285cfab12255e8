import {
  SetLevelRequestParamsSchema,
  type CallToolResult,
  type InitializeResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpDispatcher } from '../mcp/transport/dispatcher';
import { auditor, LooseCallToolParamsSchema } from '../mcp/mcp-server';
import type { McpHandlers } from '../mcp/mcp-types';
import { INVALID_PARAMS, JsonRpcError, METHOD_NOT_FOUND } from '../mcp/transport/protocol';
import type { SessionStore } from '../mcp/transport/session-store';
import { roleAtLeast, type Principal } from '@dagu-mcp/contracts';
import type { AgentCatalog } from './agent-catalog-cache';

/** What an agent endpoint's dispatcher is built from. */
export interface AgentDispatcherDeps {
  /** The cached catalog of an agent by id (`AgentCatalogCache.byAgentId`). */
  readonly catalogOf: (agentId: string) => AgentCatalog | undefined;
  /** The gateway's handlers: only `audit` is used (`mcp.tool_call.*` records). */
  readonly handlers: McpHandlers;
  readonly sessions: SessionStore;
  readonly version: string;
  /** Told of every finished `tools/call` (usage); must not throw or wait. */
  readonly onToolCall?: (call: AgentToolCall) => void;
}

/** One finished `tools/call` on an agent endpoint. */
export interface AgentToolCall {
  readonly catalog: AgentCatalog;
  readonly tool: string;
  /** The binding kind of the tool. */
  readonly kind: string;
  readonly durationMs: number;
  readonly isError: boolean;
  readonly errorCode: string | null;
  /** The person the agent acted for, from the call's principal. */
  readonly onBehalfOf?: Principal['onBehalfOf'];
}

/**
 * The code of an error result: its `code`, else `upstream_error` for a REST tool's upstream
 * answer ≥ 400 (it carries the HTTP `status` instead of a code), else `internal_error`.
 */
function errorCodeOf(result: CallToolResult): string {
  const code = result.structuredContent?.code;
  if (typeof code === 'string') return code;
  return typeof result.structuredContent?.status === 'number' ? 'upstream_error' : 'internal_error';
}

/**
 * The catalog as one caller sees it: everything for an agent key; for a person
 * signed in with OAuth, the tools some call of which their authority (the principal's role, the
 * ceiling the endpoint set) can succeed with — a viewer on an `own_role` agent does not see a DAG tool.
 */
function listedTools(catalog: AgentCatalog, principal: Principal): Tool[] {
  if (principal.credentialType !== 'oauth') return [...catalog.definitions];
  return [...catalog.tools.values()]
    .filter((tool) => tool.minRole === undefined || roleAtLeast(principal.role, tool.minRole))
    .map((tool) => tool.definition);
}

/** The agent id of an agent principal (`agent:<id>`), undefined for any other. */
function agentIdOf(principalId: string): string | undefined {
  return principalId.startsWith('agent:') ? principalId.slice('agent:'.length) : undefined;
}

/**
 * The JSON-RPC dispatcher of published agents' endpoints: `ping`, `logging/setLevel`, `tools/list` (exactly the agent's
 * catalog) and `tools/call`; any other method is -32601. Which agent a
 * request is for comes from its principal, which the endpoint set from the
 * agent key (and the session is bound to). An unknown tool is -32602; input
 * and restriction errors are `isError` results; anything unexpected becomes
 * `internal_error` with `details.requestId` at the transport.
 */
export function createAgentDispatcher(deps: AgentDispatcherDeps): McpDispatcher {
  const catalogFor = (principalId: string): AgentCatalog => {
    const id = agentIdOf(principalId);
    const catalog = id === undefined ? undefined : deps.catalogOf(id);
    // The endpoint resolved the agent just before; gone now means it was unpublished meanwhile.
    if (catalog === undefined) throw new JsonRpcError(INVALID_PARAMS, 'This agent is not published any more.');
    return catalog;
  };
  return {
    initializeResult: (protocolVersion): InitializeResult => ({
      protocolVersion,
      capabilities: { tools: { listChanged: true }, logging: {} },
      serverInfo: { name: 'dagu-mcp-agent', title: 'Dagu published agent', version: deps.version },
      instructions:
        'A published Dagu agent: call tools/list for the tools this agent offers; each tool states what it may touch.',
    }),
    handle: async (method, params, { ctx, session }) => {
      switch (method) {
        case 'ping':
          return {};
        case 'logging/setLevel': {
          const parsed = SetLevelRequestParamsSchema.safeParse(params);
          if (!parsed.success)
            throw new JsonRpcError(INVALID_PARAMS, 'Invalid params: logging/setLevel needs a level.');
          await deps.sessions.setLogLevel(session.id, parsed.data.level);
          return {};
        }
        case 'tools/list':
          return { tools: listedTools(catalogFor(ctx.principal.id), ctx.principal) };
        case 'tools/call': {
          const parsed = LooseCallToolParamsSchema.safeParse(params);
          if (!parsed.success) throw new JsonRpcError(INVALID_PARAMS, 'Invalid params: tools/call needs a tool name.');
          const { name } = parsed.data;
          const catalog = catalogFor(ctx.principal.id);
          const tool = catalog.tools.get(name);
          if (tool === undefined) throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
          const audit = auditor(deps.handlers, ctx, 'mcp.tool_call', `${ctx.principal.subject}:${name}`.slice(0, 500));
          const started = performance.now();
          const finished = (isError: boolean, errorCode: string | null): void =>
            deps.onToolCall?.({
              catalog,
              tool: name,
              kind: catalog.agent.tools.find((b) => b.toolName === name)?.kind ?? 'unknown',
              durationMs: performance.now() - started,
              isError,
              errorCode,
              onBehalfOf: ctx.principal.onBehalfOf,
            });
          let result: CallToolResult;
          try {
            result = await tool.call(parsed.data.arguments, ctx);
          } catch (err) {
            audit('internal_error');
            finished(true, 'internal_error');
            throw err;
          }
          const code = result.isError === true ? errorCodeOf(result) : undefined;
          finished(code !== undefined, code ?? null);
          const message = result.isError === true ? result.structuredContent?.message : undefined;
          audit(code, typeof message === 'string' ? message : undefined);
          return result;
        }
        default:
          throw new JsonRpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
      }
    },
    wantsStream: async (method, params, client) => {
      if (method !== 'tools/call') return false;
      const parsed = LooseCallToolParamsSchema.safeParse(params);
      // An agent's DAG tool waits and may ask the person about a checkpoint on this request's stream.
      return parsed.success && (parsed.data._meta?.progressToken !== undefined || client.canElicit);
    },
  };
}
