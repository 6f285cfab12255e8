import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServerNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpCallContext } from '../mcp-types';
import { INTERNAL_ERROR, JsonRpcError } from '../transport/protocol';
import { McpKeys } from '../transport/redis-keys';
import type { ReplicaHub } from '../transport/replica-hub';
import {
  callChannel,
  callQueueKey,
  catalogKey,
  ExtensionCatalogSchema,
  ExtensionEventSchema,
  type ExtensionCall,
  type ExtensionCatalog,
  type ExtensionEvent,
  type ExtensionReply,
} from '@dagu-mcp/contracts';

/** Options of {@link ExtensionRouter}. */
export interface ExtensionRouterOptions {
  readonly redis: Redis;
  readonly prefix: string;
  /** Extension names served (`MCP_EXTENSIONS`); any other registered catalog is ignored. */
  readonly names: readonly string[];
  readonly hub: ReplicaHub;
  readonly logger: Logger;
  /** How long one call may take, ms. */
  readonly callTimeoutMs: number;
}

/** A catalog with the extension that registered it. */
export interface OwnedCatalog {
  readonly name: string;
  readonly catalog: ExtensionCatalog;
}

/**
 * The gateway side of MCP extensions (`mcp-extension.ts` in contracts): reads the
 * catalogs of the enabled extensions, finds which one owns a tool, prompt or
 * URI, and relays one call — queueing it, forwarding the extension's
 * notifications and server→client requests to the MCP client through the
 * call's context, and resolving with its result.
 */
export class ExtensionRouter {
  constructor(private readonly options: ExtensionRouterOptions) {}

  /** The catalogs of the enabled extensions that are running (malformed ones are skipped and logged). */
  async catalogs(): Promise<OwnedCatalog[]> {
    const { names, redis, prefix, logger } = this.options;
    if (names.length === 0) return [];
    const raw = await redis.mget(...names.map((name) => catalogKey(prefix, name)));
    const owned: OwnedCatalog[] = [];
    names.forEach((name, i) => {
      const text = raw[i];
      if (text === null || text === undefined) return;
      const parsed = ExtensionCatalogSchema.safeParse(safeJson(text));
      if (parsed.success) owned.push({ name, catalog: parsed.data });
      else logger.warn({ extension: name }, 'mcp extension catalog is malformed');
    });
    return owned;
  }

  /** The extension owning tool `name`. */
  async toolOwner(name: string): Promise<string | undefined> {
    return (await this.catalogs()).find((c) => c.catalog.tools.some((t) => t.name === name))?.name;
  }

  /** The extension owning prompt `name`. */
  async promptOwner(name: string): Promise<string | undefined> {
    return (await this.catalogs()).find((c) => c.catalog.prompts.some((p) => p.name === name))?.name;
  }

  /** The extension whose URI prefixes (or listed resources and templates) cover `uri`. */
  async uriOwner(uri: string): Promise<string | undefined> {
    const owns = (c: ExtensionCatalog): boolean =>
      c.uriPrefixes.some((p) => uri.startsWith(p)) ||
      c.resources.some((r) => r.uri === uri) ||
      c.resourceTemplates.some((t) => t.uriTemplate === uri);
    return (await this.catalogs()).find((c) => owns(c.catalog))?.name;
  }

  /**
   * Relays one call to extension `name` and resolves with its result.
   *
   * @throws JsonRpcError the extension's error; -32603 when it does not
   *   answer within `callTimeoutMs`; the abort reason when the client cancels.
   */
  async call(
    name: string,
    method: ExtensionCall['method'],
    params: Record<string, unknown>,
    ctx: McpCallContext,
    clientCapabilities: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const { hub, redis, prefix, callTimeoutMs } = this.options;
    const callId = randomUUID();
    const call: ExtensionCall = {
      callId,
      method,
      params,
      principal: ctx.principal,
      sessionId: ctx.sessionId ?? '',
      clientCapabilities,
      replyTo: new McpKeys(prefix).replica(hub.replicaId),
      deadline: Date.now() + callTimeoutMs,
    };
    const reply = (message: ExtensionReply): void =>
      void redis.publish(callChannel(prefix, callId), JSON.stringify(message)).catch(() => undefined);
    let removeRelay: () => void = () => undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: () => void = () => undefined;
    try {
      return await new Promise<Record<string, unknown>>((resolve, reject) => {
        removeRelay = hub.onRelay(callId, (raw) => {
          const event = ExtensionEventSchema.safeParse(raw);
          if (event.success) this.onEvent(event.data, ctx, reply, resolve, reject);
        });
        timer = setTimeout(
          () =>
            reject(new JsonRpcError(INTERNAL_ERROR, `Extension ${name} did not answer within ${callTimeoutMs} ms.`)),
          callTimeoutMs,
        );
        onAbort = () => {
          reply({ type: 'cancel' });
          reject(new Error('The request was cancelled.'));
        };
        if (ctx.signal.aborted) return onAbort();
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        redis
          .lpush(callQueueKey(prefix, name), JSON.stringify(call))
          .catch((err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
      });
    } finally {
      removeRelay();
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  private onEvent(
    event: ExtensionEvent,
    ctx: McpCallContext,
    reply: (message: ExtensionReply) => void,
    resolve: (result: Record<string, unknown>) => void,
    reject: (error: Error) => void,
  ): void {
    switch (event.type) {
      case 'notify': {
        const notification = ServerNotificationSchema.safeParse(event.notification);
        if (notification.success) void ctx.notify(notification.data).catch(() => undefined);
        return;
      }
      case 'request': {
        const send = ctx.sendRequest;
        if (send === undefined)
          return reply({
            type: 'response',
            key: event.key,
            error: { code: INTERNAL_ERROR, message: 'No client channel for requests.' },
          });
        send(event.request).then(
          (result) => reply({ type: 'response', key: event.key, result }),
          (err: unknown) => reply({ type: 'response', key: event.key, error: asWireError(err) }),
        );
        return;
      }
      case 'close-stream':
        ctx.releaseStream?.();
        return;
      case 'result':
        return resolve(event.result);
      case 'error':
        return reject(new JsonRpcError(event.error.code, event.error.message, event.error.data));
    }
  }
}

function asWireError(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof JsonRpcError)
    return err.data === undefined
      ? { code: err.code, message: err.message }
      : { code: err.code, message: err.message, data: err.data };
  return { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
