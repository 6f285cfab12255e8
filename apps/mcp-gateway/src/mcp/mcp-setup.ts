import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { GatewayConfig } from '../config';
import { createCompletionSource } from './completion/completion';
import { ExtensionRouter } from './extensions/extension-router';
import { createMcpDispatcher, type McpDispatcher } from './mcp-dispatcher';
import type { SessionStore } from './transport/session-store';
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
 * prompts and completions, and the MCP extensions named in `MCP_EXTENSIONS`
 * (none in production). Resolves once connected to Redis.
 *
 * | Variable | Used for |
 * | --- | --- |
 * | `SESSION_IDLE_TTL_MS` | session idle TTL |
 * | `SESSION_CACHE_MS` | per-replica reuse of loaded session records |
 * | `SSE_KEEPALIVE_MS`, `SSE_RETRY_MS` | keep-alive comments, priming `retry` |
 * | `SSE_EVENT_RETENTION_MS`, `SSE_EVENT_MAX` | resumption window |
 * | `MCP_REPLICA_LEASE_MS` | liveness key of this replica (orphaned resumed requests) |
 * | `MCP_CLIENT_REQUEST_TIMEOUT_MS` | sampling/elicitation waits, extension calls |
 * | `MCP_EXTENSIONS` | extension services served (test fixtures) |
 */
export async function startMcpSessions(
  config: GatewayConfig,
  deps: McpSetupDeps,
  variant?: McpEndpointVariant,
): Promise<McpSessionManager> {
  const { handlers, bus, topics, logger, version } = deps;
  const completions = createCompletionSource({ bus, topics, logger });
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
      const extensions =
        config.MCP_EXTENSIONS.length === 0
          ? undefined
          : new ExtensionRouter({
              redis,
              prefix: config.BUS_PREFIX,
              names: config.MCP_EXTENSIONS,
              hub,
              logger,
              callTimeoutMs: config.MCP_CLIENT_REQUEST_TIMEOUT_MS,
            });
      if (extensions !== undefined)
        logger.warn({ extensions: config.MCP_EXTENSIONS }, 'MCP extensions enabled (test fixtures)');
      return createMcpDispatcher({
        handlers,
        sessions: store,
        version,
        completions,
        ...(extensions !== undefined ? { extensions } : {}),
      });
    },
  });
  await sessions.start();
  return sessions;
}
