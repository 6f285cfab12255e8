import type { RequestHandler } from 'express';
import { Redis } from 'ioredis';
import type { Role } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { GatewayConfig } from '../config';
import type { AuditEvent } from '../audit/audit-log';
import type { AgentKeyRecord } from '../auth/agent-key.repository';
import type { ApiKeyVerifier } from '../auth/api-key-cache';
import type { ExtensionRouter } from '../mcp/extensions/extension-router';
import type { ServedExtensions } from '../mcp/extensions/extension-settings';
import { configuredExtensions, createExtensionRouter, startMcpSessions } from '../mcp/mcp-setup';
import type { McpHandlers } from '../mcp/mcp-types';
import type { McpSessionManager } from '../mcp/session-manager';
import { AgentCatalogCache, type AgentCatalog } from '../agents/agent-catalog-cache';
import { createAgentDispatcher } from '../agents/agent-dispatcher';
import { agentGate, type AgentEndpointOAuth } from '../agents/agent-endpoint';
import { agentPrincipal } from '../agents/agent-tool-base';
import { buildAgentTools } from '../agents/agent-tools';
import { watchBoundExtensions } from '../agents/extension-tool';
import type { UsageRecorder } from '../usage/usage-recorder';

/** What the agent endpoints are built from. */
export interface AgentSetupDeps {
  readonly bus: BusClient;
  /** The gateway's MCP handlers: the Dagu tools narrowed per agent, and the audit. */
  readonly handlers: McpHandlers;
  readonly topics: ReadonlyMap<string, unknown>;
  readonly logger: Logger;
  readonly version: string;
  readonly keys: ApiKeyVerifier<AgentKeyRecord>;
  readonly currentRoleOf: (principalId: string) => Promise<Role | undefined>;
  readonly audit: (event: AuditEvent) => void;
  /** The built-in OAuth server's view for agent endpoints, when it is on. */
  readonly oauth?: AgentEndpointOAuth;
  /** The extensions served, for `extension_tool` bindings; default: the configured ones only. */
  readonly served?: ServedExtensions;
  /** Where every tools/call is counted. */
  readonly usage?: UsageRecorder;
}

/** The started agent endpoints. */
export interface AgentEndpoints {
  readonly catalogs: AgentCatalogCache;
  readonly sessions: McpSessionManager;
  /** Resolves and authenticates `/mcp/v1/{workspace}/{agent}` (agents/agent-endpoint.ts). */
  readonly gate: RequestHandler;
  close(): Promise<void>;
}

/**
 * Starts published agents' endpoints: the per-agent catalog cache
 * (refreshed every `AGENT_CATALOG_REFRESH_MS` and on every announced change),
 * and a session manager with the transport of `/mcp` and the agents'
 * dispatcher, sessions kept under `<BUS_PREFIX>:agents:mcp:`. When a rebuilt
 * catalog's tool list differs, every replica sends
 * `notifications/tools/list_changed` to the live sessions of that agent it
 * serves (an open stream or a running request there), after its own rebuild.
 * Agents that bind extension tools are also rebuilt whenever the served
 * extension tools change (agents/extension-tool.ts).
 */
export async function startAgentEndpoints(config: GatewayConfig, deps: AgentSetupDeps): Promise<AgentEndpoints> {
  const publisher = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, connectionName: 'gateway-agents' });
  const subscriber = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null, connectionName: 'gateway-agents-sub' });
  publisher.on('error', (err: Error) => deps.logger.debug({ err: err.message }, 'agents redis error'));
  subscriber.on('error', (err: Error) => deps.logger.debug({ err: err.message }, 'agents redis subscriber error'));
  let catalogs: AgentCatalogCache | undefined;
  let extensions: ExtensionRouter | undefined;
  const sessions = await startMcpSessions(
    config,
    { handlers: deps.handlers, bus: deps.bus, topics: deps.topics, logger: deps.logger, version: deps.version },
    {
      keySuffix: 'agents',
      createDispatcher: ({ sessions: store, hub, redis }) => {
        // Extension calls made from agent sessions are answered on this endpoint's replica channel.
        extensions = createExtensionRouter(
          config,
          { hub, redis },
          deps.served ?? configuredExtensions(config),
          deps.logger,
        );
        return createAgentDispatcher({
          catalogOf: (id) => catalogs?.byAgentId(id),
          handlers: deps.handlers,
          sessions: store,
          version: deps.version,
          onToolCall: (call) =>
            deps.usage?.record({
              at: new Date(),
              agentId: call.catalog.agent.id,
              workspace: call.catalog.agent.workspace,
              agentSlug: call.catalog.agent.slug,
              tool: call.tool,
              kind: call.kind,
              durationMs: call.durationMs,
              isError: call.isError,
              errorCode: call.errorCode,
              onBehalfOf: call.onBehalfOf,
            }),
        });
      },
    },
  );
  // Each replica tells the sessions it serves, after its own rebuild: a client that hears
  // list_changed and asks tools/list here gets the new list (a claim-once fan-out from the
  // first replica to rebuild could reach a session whose replica had not rebuilt yet, and a
  // claim per change lost a change flipped back and forth within the claim's life).
  const notifyChanged = async (catalog: AgentCatalog): Promise<void> => {
    const { agent } = catalog;
    // Its key sessions and the sessions of the people signed in to it (bound to them as well).
    const ids = await sessions.localSessionsThrough(agentPrincipal(agent).id);
    await Promise.all(ids.map((sid) => sessions.notifySession(sid, { method: 'notifications/tools/list_changed' })));
    deps.logger.info({ agent: `${agent.workspace}/${agent.slug}`, sessions: ids.length }, 'agent tools changed');
  };
  catalogs = new AgentCatalogCache({
    bus: deps.bus,
    build: (agent) =>
      buildAgentTools(agent, {
        bus: deps.bus,
        daguTools: deps.handlers.tools,
        currentRoleOf: deps.currentRoleOf,
        logger: deps.logger,
        ...(extensions !== undefined ? { extensions } : {}),
      }),
    publisher,
    subscriber,
    channel: `${config.BUS_PREFIX}:agents:changed`,
    refreshMs: config.AGENT_CATALOG_REFRESH_MS,
    onToolsChanged: notifyChanged,
    logger: deps.logger,
  });
  await catalogs.start();
  const cache = catalogs;
  const stopWatching =
    extensions === undefined ? () => undefined : watchBoundExtensions(extensions, cache, deps.logger);
  return {
    catalogs: cache,
    sessions,
    gate: agentGate({
      catalogs: cache,
      keys: deps.keys,
      audit: deps.audit,
      ...(deps.oauth !== undefined ? { oauth: deps.oauth } : {}),
    }),
    async close() {
      stopWatching();
      cache.stop();
      await sessions.closeAll();
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
