import {
  McpError,
  ReadResourceRequestParamsSchema,
  ReadResourceResultSchema,
  SubscribeRequestParamsSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { DaguError, parseDaguUri } from '@dagu-mcp/contracts';
import { auditCode, auditor } from './mcp-server';
import type { McpHandlers } from './mcp-types';
import type { ExtensionRouter } from './extensions/extension-router';
import { declaresUiExtension, RUN_INSPECTOR_RESOURCE } from './apps/mcp-apps';
import { parseParams, type MethodHandler } from './transport/dispatcher';
import { toMcpError } from './transport/mcp-errors';
import { INTERNAL_ERROR, JsonRpcError } from './transport/protocol';
import { UnexpectedFailure } from './transport/unexpected-failure';
import type { SessionStore } from './transport/session-store';

/** What the resource methods are built from. */
export interface ResourceMethodDeps {
  readonly handlers: McpHandlers;
  readonly sessions: SessionStore;
  readonly extensions: ExtensionRouter | undefined;
}

/**
 * `resources/list`, `resources/templates/list`, `resources/read` (spec 020;
 * errors per dagu-model §10) and `resources/subscribe` / `unsubscribe`
 * (dagu-model §8): subscriptions are kept in the session record in Redis;
 * `dagu://` subscriptions must name a run or its `/logs`. Delivery of
 * `notifications/resources/updated` is {@link McpSessionManager.resourceUpdated}.
 */
export function resourceMethods(deps: ResourceMethodDeps): Record<string, MethodHandler> {
  const { handlers, sessions, extensions } = deps;
  const catalogs = async () => (extensions === undefined ? [] : extensions.catalogs());
  return {
    'resources/list': async (_params, { session }) => ({
      resources: [
        ...handlers.listResources(),
        // MCP Apps: the inspector is listed for sessions that declared the extension.
        ...(declaresUiExtension(session.clientCapabilities) ? [RUN_INSPECTOR_RESOURCE] : []),
        ...(await catalogs()).flatMap((c) => c.catalog.resources),
      ],
    }),
    'resources/templates/list': async () => ({
      resourceTemplates: [
        ...handlers.listResourceTemplates(),
        ...(await catalogs()).flatMap((c) => c.catalog.resourceTemplates),
      ],
    }),
    'resources/read': async (params, { ctx, session }) => {
      const { uri } = parseParams(ReadResourceRequestParamsSchema, params, 'resources/read needs a uri');
      const owner = await extensions?.uriOwner(uri);
      if (owner !== undefined) {
        const relayed = ReadResourceResultSchema.safeParse(
          await extensions?.call(owner, 'resources/read', { uri }, ctx, session.clientCapabilities),
        );
        if (!relayed.success) throw new JsonRpcError(INTERNAL_ERROR, `Resource ${uri} came back malformed.`);
        return relayed.data;
      }
      const audit = auditor(handlers, ctx, 'mcp.resource.read', uri);
      try {
        const result = await handlers.readResource(uri, ctx);
        audit(undefined);
        return result;
      } catch (err) {
        audit(auditCode(err));
        // Not a domain error: the request runner logs it and answers internal_error (unexpected-failure.ts).
        if (!(err instanceof DaguError))
          throw new UnexpectedFailure(err, { resourceUri: uri, operation: 'resources/read' });
        throw fromMcpError(toMcpError(err, { resourceUri: uri, operation: 'resources/read' }));
      }
    },
    'resources/subscribe': async (params, { ctx, session }) => {
      const { uri } = parseParams(SubscribeRequestParamsSchema, params, 'resources/subscribe needs a uri');
      const owner = await extensions?.uriOwner(uri);
      if (owner !== undefined)
        await extensions?.call(owner, 'resources/subscribe', { uri }, ctx, session.clientCapabilities);
      else checkSubscribable(uri);
      await sessions.subscribe(session.id, uri);
      return {};
    },
    'resources/unsubscribe': async (params, { ctx, session }) => {
      const { uri } = parseParams(SubscribeRequestParamsSchema, params, 'resources/unsubscribe needs a uri');
      const owner = await extensions?.uriOwner(uri);
      if (owner !== undefined)
        await extensions?.call(owner, 'resources/unsubscribe', { uri }, ctx, session.clientCapabilities);
      await sessions.unsubscribe(session.id, uri);
      return {};
    },
  };
}

/** dagu-model §8: subscriptions are offered on run URIs and their `/logs`. */
function checkSubscribable(uri: string): void {
  try {
    const resource = parseDaguUri(uri);
    if (resource.kind === 'run' || resource.kind === 'run_logs') return;
    throw new DaguError(
      'invalid_resource_uri',
      'Subscriptions are offered on DAG-run URIs (dagu://runs/{name}/{dagRunId}) and their /logs.',
      { field: 'uri' },
    );
  } catch (err) {
    throw fromMcpError(toMcpError(err, { resourceUri: uri, operation: 'resources/subscribe' }));
  }
}

/** The SDK error `toMcpError` builds, as the transport's error type (same code, message and data). */
function fromMcpError(error: McpError): JsonRpcError {
  return new JsonRpcError(error.code, error.message, error.data);
}
