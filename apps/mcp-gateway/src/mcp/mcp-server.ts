import {
  RequestSchema,
  type CallToolResult,
  type InitializeResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { DaguError, IDEMPOTENCY_META_KEY, IdempotencyKeySchema } from '@dagu-mcp/contracts';
import { runWithIdempotencyKey } from '@dagu-mcp/bus';
import { authzDeniedEvent } from '../http/authz-denials';
import { sessionRef } from '../http/request-log';
import { toolError } from './transport/tool-error';
import { z } from 'zod';
import { TOOL_DEFINITIONS } from './tools/tool-definitions';
import { mayDo, offersTool } from './tools/tool-access';
import { INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError, type ProtocolVersion } from './transport/protocol';
import type { MethodHandler } from './transport/dispatcher';
import type { ExtensionRouter } from './extensions/extension-router';
import { callExtensionTool } from './extensions/extension-tool-call';
import type { McpCallContext, McpHandlers } from './mcp-types';
import { declaresUiExtension, withInspectorMeta, withUiExtension } from './apps/mcp-apps';
import { asksBeforeTask, taskSupportOf, type TaskCallRunner } from './task-calls';
import { TASKS_EXTENSION } from './task-store';
import {
  isModernVersion,
  MISSING_CLIENT_CAPABILITY as MISSING_REQUIRED_CLIENT_CAPABILITY,
} from './transport/modern-protocol';

/** Server `instructions` (dagu-model §8): one paragraph. */
export const SERVER_INSTRUCTIONS =
  'Dagu runs DAG workflows. Read DAGs, runs, logs, wiki pages and the reference topics with dagu_read ' +
  '(start with {"target":"reference"}); validate a DAG with dagu_change in preview mode before writing it with mode=apply; ' +
  'start, enqueue, retry and stop runs with dagu_execute; follow a run with wait=true, by subscribing to its dagu://runs URI, ' +
  'or by reading it again with dagu_read.';

/**
 * What the gateway declares in `initialize` (tools, resources with subscriptions, prompts,
 * completions, logging). `tools.listChanged`: extension tools come and go as services
 * announce and admins enable them.
 */
export const SERVER_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
  logging: {},
};

/**
 * The `initialize` result for a negotiated revision. A client that declares the MCP Apps
 * extension (`io.modelcontextprotocol/ui`) sees it declared back; others see
 * {@link SERVER_CAPABILITIES} unchanged.
 */
export function initializeResult(
  protocolVersion: ProtocolVersion,
  version: string,
  clientCapabilities?: Record<string, unknown>,
): InitializeResult {
  return {
    protocolVersion,
    capabilities: declaresUiExtension(clientCapabilities) ? withUiExtension(SERVER_CAPABILITIES) : SERVER_CAPABILITIES,
    serverInfo: { name: 'dagu-mcp', title: 'Dagu MCP', version },
    instructions: SERVER_INSTRUCTIONS,
  };
}

/**
 * `tools/call` params with `arguments` of any JSON type. The SDK's stock
 * schema rejects non-object arguments with -32602 before a handler runs;
 * 021/022/036 require an `isError` result with `invalid_tool_input` instead
 * (dagu-model §10).
 */
export const LooseCallToolParamsSchema = z.looseObject({
  name: z.string(),
  arguments: z.unknown().optional(),
  _meta: z.looseObject({ progressToken: z.union([z.string(), z.number()]).optional() }).optional(),
});
/** The whole loose `tools/call` request (for callers that validate requests). */
export const LooseCallToolRequestSchema = RequestSchema.extend({
  method: z.literal('tools/call'),
  params: LooseCallToolParamsSchema,
});

/** What the tool and resource methods are built from. */
export interface ToolMethodDeps {
  readonly handlers: McpHandlers;
  readonly extensions: ExtensionRouter | undefined;
  /** Runs task-capable extension tools as tasks (task-calls.ts, mcp-revisions §4); absent: none is. */
  readonly taskCalls?: TaskCallRunner;
}

/**
 * `tools/list` and `tools/call` (spec 021/022/036; dagu-model §8, §10). The list leaves out
 * what the principal can use none of; a call is not refused for that here:
 * the tool's action answers `unauthorized`.
 */
export function toolMethods(deps: ToolMethodDeps): Record<string, MethodHandler> {
  const { handlers, extensions, taskCalls } = deps;
  // A call task's rounds go the way of any extension tool call.
  if (extensions !== undefined)
    taskCalls?.attach(async (params, ctx, capabilities) => {
      const target = await extensions.toolTarget(params.name);
      if (target === undefined) throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${params.name}`);
      return callExtensionTool(extensions, target, params, ctx, capabilities);
    });
  return {
    'tools/list': async (_params, { ctx, session }) => {
      // Only what the principal's role (capped by an OAuth token's scopes) can use.
      // An extension tool is one action: its minimum role, gated by dagu:read (oauth/scopes.ts);
      // a test fixture's tools are relayed unchecked, so listed as they are.
      const extra =
        extensions === undefined
          ? []
          : (await extensions.servedTools())
              .filter((t) => t.verbatim || mayDo(ctx.principal, { role: t.minRole, scope: 'dagu:read' }))
              .map((t) => t.definition);
      const offered = TOOL_DEFINITIONS.filter((t) => offersTool(ctx.principal, t.name));
      // MCP Apps: only a session that declared the extension sees `_meta.ui` on dagu_execute.
      const own = declaresUiExtension(session.clientCapabilities) ? withInspectorMeta(offered) : offered;
      return { tools: [...own, ...extra] };
    },
    'tools/call': async (params, { ctx, session }) => {
      const parsed = LooseCallToolParamsSchema.safeParse(params);
      if (!parsed.success) throw new JsonRpcError(INVALID_PARAMS, 'Invalid params: tools/call needs a tool name.');
      const { name } = parsed.data;
      const tool = handlers.tools[name];
      const target = tool === undefined ? await extensions?.toolTarget(name) : undefined;
      if (tool === undefined && target === undefined) throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
      const audit = auditor(
        handlers,
        ctx,
        'mcp.tool_call',
        describeCall(name, parsed.data.arguments),
        auditDetailsOf(name, parsed.data.arguments),
      );
      let result: CallToolResult;
      if (tool !== undefined) {
        const key = idempotencyKeyOf(parsed.data._meta);
        result =
          key instanceof DaguError
            ? toolError(key.toServiceError())
            : await runWithIdempotencyKey(key, () => tool(parsed.data.arguments, ctx));
      } else if (extensions !== undefined && target !== undefined) {
        // Tasks extension (mcp-revisions §4): a task-capable tool runs as a task for a client that declared it.
        const support = taskSupportOf(target.definition);
        const asksFirst = asksBeforeTask(target.definition) && parsed.data.inputResponses === undefined;
        if (support !== 'forbidden' && ctx.tasks === true && taskCalls?.ready === true && !asksFirst)
          result = await taskCalls.start(parsed.data, ctx, session.clientCapabilities);
        else if (support === 'required' && ctx.tasks !== true && isModernVersion(session.protocolVersion))
          throw new JsonRpcError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            `Tool ${name} runs only as a task: declare the client capability extensions["${TASKS_EXTENSION}"].`,
            { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
          );
        else result = await callExtensionTool(extensions, target, parsed.data, ctx, session.clientCapabilities);
      } else throw new JsonRpcError(INTERNAL_ERROR, `Tool ${name} has no handler.`);
      const code = result.isError ? result.structuredContent?.code : undefined;
      const message = result.isError ? result.structuredContent?.message : undefined;
      audit(
        result.isError ? (typeof code === 'string' ? code : 'internal_error') : undefined,
        typeof message === 'string' ? message : undefined,
      );
      return result;
    },
  };
}

/**
 * The idempotency key of a `tools/call` (`_meta["io.dagu/idempotencyKey"]`), `undefined` without one, or an `invalid_tool_input`
 * error for a key that is not 1–255 visible ASCII characters.
 */
function idempotencyKeyOf(meta: Record<string, unknown> | undefined): string | undefined | DaguError {
  const raw = meta?.[IDEMPOTENCY_META_KEY];
  if (raw === undefined) return undefined;
  const key = IdempotencyKeySchema.safeParse(raw);
  if (key.success) return key.data;
  return new DaguError(
    'invalid_tool_input',
    `_meta["${IDEMPOTENCY_META_KEY}"] must be 1–255 visible ASCII characters.`,
    {
      field: `_meta.${IDEMPOTENCY_META_KEY}`,
    },
  );
}

/**
 * Records `<prefix>.received` now and returns the function that records the
 * outcome: `succeeded`, `denied` (code `unauthorized`, plus an `authz.denied`
 * row with the role needed) or `failed` (with the code). The session appears
 * as its `sessionRef` (a hash), never as the raw id, which works like a
 * bearer credential.
 */
export function auditor(
  handlers: McpHandlers,
  ctx: McpCallContext,
  prefix: string,
  target: string,
  extra: Record<string, unknown> = {},
): (errorCode: string | undefined, message?: string) => void {
  const started = performance.now();
  const session = ctx.sessionId === undefined ? {} : { sessionRef: sessionRef(ctx.sessionId) };
  const base = { category: 'mcp', principal: ctx.principal, target, details: { ...session, ...extra } };
  handlers.audit({ ...base, action: `${prefix}.received`, outcome: 'received' });
  return (errorCode, message) => {
    const outcome = errorCode === undefined ? 'succeeded' : errorCode === 'unauthorized' ? 'denied' : 'failed';
    if (outcome === 'denied' && ctx.principal !== undefined) {
      handlers.audit(
        authzDeniedEvent({ principal: ctx.principal, attempted: target, message: message ?? '', surface: 'mcp' }),
      );
    }
    handlers.audit({
      ...base,
      action: `${prefix}.${outcome}`,
      outcome,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      details: errorCode === undefined ? base.details : { ...base.details, code: errorCode },
    });
  };
}

/** The 020 error code of a failure, for audit records. */
export function auditCode(err: unknown): string {
  return err instanceof DaguError ? err.code : 'internal_error';
}

/**
 * Audit details a call adds (Dagu spec 021 Workbook): a workbook read records
 * its path, as supplied and trimmed, as `workbook_path`; never its password.
 */
function auditDetailsOf(tool: string, args: unknown): Record<string, unknown> {
  if (tool !== 'dagu_read' || typeof args !== 'object' || args === null || Array.isArray(args)) return {};
  const record: Record<string, unknown> = { ...args };
  const { target, path } = record;
  if (typeof target !== 'string' || target.trim() !== 'workbook' || typeof path !== 'string') return {};
  return path.trim() === '' ? {} : { workbook_path: path.trim().slice(0, 4096) };
}

/** `dagu_read:dag_spec:nightly`-style audit target from the tool name and its non-secret selector fields. */
function describeCall(tool: string, args: unknown): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return tool;
  const record: Record<string, unknown> = { ...args };
  const parts = ['target', 'action', 'mode', 'name', 'uri', 'dagRunId']
    .map((k) => record[k])
    .filter((v): v is string => typeof v === 'string');
  return [tool, ...parts].join(':').slice(0, 500);
}
