import type { Redis } from 'ioredis';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { GatewayConfig } from '../config';
import { createCompletionSource } from './completion/completion';
import { ExtensionRouter } from './extensions/extension-router';
import { createMcpDispatcher } from './mcp-dispatcher';
import { listPrompts } from './prompts/prompt-catalog';
import type { McpDispatcher, MethodHandler } from './transport/dispatcher';
import type { ReplicaHub } from './transport/replica-hub';
import type { SessionStore } from './transport/session-store';
import { ServedExtensions } from './extensions/extension-settings';
import { watchToolList } from './extensions/tool-list-watcher';
import { TOOL_DEFINITIONS } from './tools/tool-definitions';
import type { McpHandlers } from './mcp-types';
import { McpSessionManager } from './session-manager';
import type { TaskCallRunner } from './task-calls';

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
  /** The extensions to serve (fixtures, static `MCP_EXTENSIONS`, admin-enabled); default: the configured ones only. */
  readonly served?: ServedExtensions;
  /** The tasks extension's methods served on `/mcp` (task-methods.ts); absent: no tasks. */
  readonly tasks?: Readonly<Record<string, MethodHandler>>;
  /** Runs task-capable extension tools as tasks on `/mcp` (task-calls.ts); with `tasks`. */
  readonly taskCalls?: TaskCallRunner;
}

/** What an endpoint's dispatcher is built from: its session store, replica hub and Redis connection. */
export interface McpEndpointParts {
  readonly sessions: SessionStore;
  readonly hub: ReplicaHub;
  readonly redis: Redis;
}

/**
 * Another MCP endpoint served with the same transport, sessions and settings
 * as `/mcp` but its own methods (published agents): its sessions
 * and streams live under `<BUS_PREFIX>:<keySuffix>:mcp:` in Redis, apart from
 * `/mcp`'s, and `createDispatcher` builds its JSON-RPC dispatcher.
 */
export interface McpEndpointVariant {
  readonly keySuffix: string;
  readonly createDispatcher: (parts: McpEndpointParts) => McpDispatcher;
}

/** The extensions the config serves without an admin switch (`MCP_TEST_FIXTURE_EXTENSIONS`, `MCP_EXTENSIONS`). */
export function configuredExtensions(config: GatewayConfig): ServedExtensions {
  return new ServedExtensions({ staticNames: config.MCP_EXTENSIONS, fixtureNames: config.MCP_TEST_FIXTURE_EXTENSIONS });
}

/**
 * The extension router of one MCP endpoint (`/mcp`, or the agents' endpoints): catalogs and
 * call queues under `BUS_PREFIX`, answers on the endpoint's own replica channel, the
 * gateway's tool and prompt names reserved.
 */
export function createExtensionRouter(
  config: GatewayConfig,
  parts: Pick<McpEndpointParts, 'hub' | 'redis'>,
  served: ServedExtensions,
  logger: Logger,
): ExtensionRouter {
  return new ExtensionRouter({
    redis: parts.redis,
    prefix: config.BUS_PREFIX,
    served,
    hub: parts.hub,
    logger,
    callTimeoutMs: config.MCP_EXTENSION_CALL_TIMEOUT_MS,
    reservedToolNames: TOOL_DEFINITIONS.map((t) => t.name),
    reservedPromptNames: listPrompts().map((p) => p.name),
  });
}

/**
 * Builds and starts the MCP session manager from the gateway config:
 * sessions and SSE events in Redis under `BUS_PREFIX`, the dispatcher with
 * prompts and completions, and the MCP extensions (configured ones, admin-enabled
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
 * | `MCP_EXTENSIONS` | extension services served without an admin switch (namespaced, checked) |
 * | `MCP_TEST_FIXTURE_EXTENSIONS` | protocol test fixtures served as announced |
 * | `MCP_EXTENSION_CALL_TIMEOUT_MS` | deadline of one extension call |
 */
export async function startMcpSessions(
  config: GatewayConfig,
  deps: McpSetupDeps,
  variant?: McpEndpointVariant,
): Promise<McpSessionManager> {
  const { handlers, bus, topics, logger, version } = deps;
  const completions = createCompletionSource({ bus, topics, logger });
  const served = deps.served ?? configuredExtensions(config);
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
      if (variant !== undefined) return variant.createDispatcher({ sessions: store, hub, redis });
      router = createExtensionRouter(config, { hub, redis }, served, logger);
      if (config.MCP_TEST_FIXTURE_EXTENSIONS.length > 0)
        logger.warn(
          { extensions: config.MCP_TEST_FIXTURE_EXTENSIONS },
          'TEST FIXTURE MCP extensions served as announced, without role or schema checks (MCP_TEST_FIXTURE_EXTENSIONS)',
        );
      return createMcpDispatcher({
        handlers,
        sessions: store,
        version,
        completions,
        extensions: router,
        ...(deps.tasks !== undefined ? { tasks: deps.tasks } : {}),
        ...(deps.taskCalls !== undefined ? { taskCalls: deps.taskCalls } : {}),
      });
    },
  });
  await sessions.start();
  if (router !== undefined) {
    sessions.feedToolListChanges();
    watchToolList(router, sessions, logger);
  }
  return sessions;
}
