import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { GatewayConfig } from '../config';
import { createCompletionSource } from './completion/completion';
import { ExtensionRouter } from './extensions/extension-router';
import { createMcpDispatcher, type McpDispatcher } from './mcp-dispatcher';
import type { SessionStore } from './transport/session-store';
import { ServedExtensions } from './extensions/extension-settings';
import { watchToolList } from './extensions/tool-list-watcher';
import { TOOL_DEFINITIONS } from './tools/tool-definitions';
import type { McpHandlers } from './mcp-types';
import { McpSessionManager } from './session-manager';

/** What the MCP layer is built from, besides the config. */
export interface McpSetupDeps {
  /** The tools and resource reads of gateway-handlers.ts. */
  readonly handlers: McpHandlers;
  readonly bus: BusClient;
  /** Reference topics, for `completion/complete` of `{topic}`. */
  readonly topics: ReadonlyMap<string, unknown>;
  readonly logger: Logger;
  /** The gateway's version, reported in `serverInfo`. */
  readonly version: string;
  /** The extensions to serve (static `MCP_EXTENSIONS` plus admin-enabled); default: the static list only. */
  readonly served?: ServedExtensions;
}

/**
 * Another MCP endpoint served with the same transport, sessions and settings
 * as `/mcp` but its own methods (published agents, issue 24): its sessions
 * and streams live under `<BUS_PREFIX>:<keySuffix>:mcp:` in Redis, apart from
 * `/mcp`'s, and `createDispatcher` builds its JSON-RPC dispatcher.
 */
export interface McpEndpointVariant {
  readonly keySuffix: string;
  readonly createDispatcher: (parts: { readonly sessions: SessionStore }) => McpDispatcher;
}

/**
 * Builds and starts the MCP session manager from the gateway config:
 * sessions and SSE events in Redis under `BUS_PREFIX`, the dispatcher with
 * prompts and completions, and the MCP extensions (static `MCP_EXTENSIONS`, admin-enabled
 * ones through `served`), with `notifications/tools/list_changed` when their tools change. Resolves once connected to Redis.
 *
 * | Variable | Used for |
 * | --- | --- |
 * | `SESSION_IDLE_TTL_MS` | session idle TTL |
 * | `SESSION_CACHE_MS` | per-replica reuse of loaded session records |
 * | `SSE_KEEPALIVE_MS`, `SSE_RETRY_MS` | keep-alive comments, priming `retry` |
 * | `SSE_EVENT_RETENTION_MS`, `SSE_EVENT_MAX` | resumption window |
 * | `MCP_REPLICA_LEASE_MS` | liveness key of this replica (orphaned resumed requests) |
 * | `MCP_CLIENT_REQUEST_TIMEOUT_MS` | sampling/elicitation waits, extension calls |
 * | `MCP_EXTENSIONS` | extension services served as announced (static allow-list) |
 * | `MCP_EXTENSION_CALL_TIMEOUT_MS` | deadline of one extension call |
 */
export async function startMcpSessions(
  config: GatewayConfig,
  deps: McpSetupDeps,
  variant?: McpEndpointVariant,
): Promise<McpSessionManager> {
  const { handlers, bus, topics, logger, version } = deps;
  const completions = createCompletionSource({ bus, topics, logger });
  const served = deps.served ?? new ServedExtensions({ staticNames: config.MCP_EXTENSIONS });
  let router: ExtensionRouter | undefined;
  const sessions = new McpSessionManager({
    redisUrl: config.REDIS_URL,
    prefix: variant === undefined ? config.BUS_PREFIX : `${config.BUS_PREFIX}:${variant.keySuffix}`,
    logger,
    idleTtlMs: config.SESSION_IDLE_TTL_MS,
    sessionCacheMs: config.SESSION_CACHE_MS,
    keepAliveMs: config.SSE_KEEPALIVE_MS,
    retryMs: config.SSE_RETRY_MS,
    eventRetentionMs: config.SSE_EVENT_RETENTION_MS,
    eventMaxLen: config.SSE_EVENT_MAX,
    clientRequestTimeoutMs: config.MCP_CLIENT_REQUEST_TIMEOUT_MS,
    replicaLeaseMs: config.MCP_REPLICA_LEASE_MS,
    maxBatchMessages: config.MCP_BATCH_MAX_MESSAGES,
    maxSessionRecordBytes: config.MCP_SESSION_RECORD_MAX_BYTES,
    maxSubscriptions: config.MCP_SUBSCRIPTIONS_MAX,
    maxSessionsPerPrincipal: config.MCP_SESSIONS_PER_PRINCIPAL_MAX,
    createDispatcher: ({ sessions: store, hub, redis }) => {
      if (variant !== undefined) return variant.createDispatcher({ sessions: store });
      router = new ExtensionRouter({
        redis,
        prefix: config.BUS_PREFIX,
        served,
        hub,
        logger,
        callTimeoutMs: config.MCP_EXTENSION_CALL_TIMEOUT_MS,
        reservedToolNames: TOOL_DEFINITIONS.map((t) => t.name),
      });
      if (config.MCP_EXTENSIONS.length > 0)
        logger.warn({ extensions: config.MCP_EXTENSIONS }, 'static MCP extensions served (MCP_EXTENSIONS)');
      return createMcpDispatcher({ handlers, sessions: store, version, completions, extensions: router });
    },
  });
  await sessions.start();
  if (router !== undefined) {
    sessions.feedToolListChanges();
    watchToolList(router, sessions, logger);
  }
  return sessions;
}
