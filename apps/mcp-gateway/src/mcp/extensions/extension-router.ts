import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServerNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpCallContext } from '../transport/dispatcher';
import { INTERNAL_ERROR, JsonRpcError } from '../transport/protocol';
import type { ReplicaHub } from '../transport/replica-hub';
import {
  serveCatalogs,
  type OwnedCatalog,
  type ServedPrompt,
  type ServedTool,
  type ServedView,
} from './extension-catalog';
import type { ServedExtension, ServedExtensions } from './extension-settings';
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
  /** The extensions served now: fixtures, the static `MCP_EXTENSIONS` list and those an admin enabled (extension-settings.ts). */
  readonly served: ServedExtensions;
  /** The replica hub of the endpoint whose calls this router relays (`/mcp`'s or the agents'): answers come on its channel. */
  readonly hub: ReplicaHub;
  readonly logger: Logger;
  /** How long one call may take, ms. */
  readonly callTimeoutMs: number;
  /** Tool names no extension may take (the gateway's own). */
  readonly reservedToolNames: readonly string[];
  /** Prompt names no extension may take (the gateway's own); default none. */
  readonly reservedPromptNames?: readonly string[];
}

export type { OwnedCatalog, ServedPrompt, ServedTool } from './extension-catalog';

/** Thrown by {@link ExtensionRouter.call} when the extension did not answer: timeout, stopped announcing, queue down. */
export class ExtensionUnavailable extends JsonRpcError {
  constructor(
    readonly extension: string,
    message: string,
  ) {
    // A JSON-RPC internal error where a call is relayed as is (static extensions, resources, prompts).
    super(INTERNAL_ERROR, message);
  }
}

/**
 * The gateway side of MCP extensions (`mcp-extension.ts` in contracts): reads the
 * catalogs of the served extensions, finds which one owns a tool, prompt or
 * URI, and relays one call — queueing it, forwarding the extension's
 * notifications and server→client requests to the MCP client through the
 * call's context, and resolving with its result.
 *
 * What is served of each catalog — namespaced `<extension>.<tool>` tools and prompts,
 * resources that shadow neither `dagu://` nor another extension — is extension-catalog.ts
 *; a refused entry is left out and logged.
 */
export class ExtensionRouter {
  /** Refused catalog entries already logged. */
  private readonly reported = new Set<string>();

  constructor(private readonly options: ExtensionRouterOptions) {}

  /** The catalogs of the served extensions that are running, as served (malformed ones are skipped and logged). */
  async catalogs(): Promise<OwnedCatalog[]> {
    return (await this.snapshot()).catalogs;
  }

  /** Every served tool, in listing order, from one read of the catalogs (`tools/list`). */
  async servedTools(): Promise<ServedTool[]> {
    return [...(await this.snapshot()).tools.values()];
  }

  /** The served tool called `name` (as listed), or undefined. */
  async toolTarget(name: string): Promise<ServedTool | undefined> {
    return (await this.snapshot()).tools.get(name);
  }

  /**
   * Tool `tool` of extension `service` as a namespaced extension serves it now (an agent's
   * `extension_tool` binding), or undefined: not enabled, not allowed, not announcing, or a
   * test fixture (whose tools are never bound).
   */
  async namespacedTool(service: string, tool: string): Promise<ServedTool | undefined> {
    const target = await this.toolTarget(`${service}.${tool}`);
    return target !== undefined && target.extension === service && target.ownName === tool && !target.verbatim
      ? target
      : undefined;
  }

  /** The extension owning tool `name`. */
  async toolOwner(name: string): Promise<string | undefined> {
    return (await this.toolTarget(name))?.extension;
  }

  /** The served prompt called `name` (as listed): its extension and own name, or undefined. */
  async promptTarget(name: string): Promise<ServedPrompt | undefined> {
    return (await this.snapshot()).prompts.get(name);
  }

  /** True while extension `name` keeps its catalog announced. */
  async isAnnounced(name: string): Promise<boolean> {
    return (await this.options.redis.exists(catalogKey(this.options.prefix, name))) === 1;
  }

  /** The extension whose URI prefixes (or listed resources and templates) cover `uri`, among what is served. */
  async uriOwner(uri: string): Promise<string | undefined> {
    const owns = (c: ExtensionCatalog): boolean =>
      c.uriPrefixes.some((p) => uri.startsWith(p)) ||
      c.resources.some((r) => r.uri === uri) ||
      c.resourceTemplates.some((t) => t.uriTemplate === uri);
    return (await this.catalogs()).find((c) => owns(c.catalog))?.name;
  }

  private async snapshot(): Promise<ServedView> {
    const { redis, prefix, logger } = this.options;
    const served = await this.options.served.served();
    if (served.length === 0) return { catalogs: [], tools: new Map(), prompts: new Map() };
    const raw = await redis.mget(...served.map((s) => catalogKey(prefix, s.name)));
    const entries: { extension: ServedExtension; catalog: ExtensionCatalog }[] = [];
    served.forEach((extension, i) => {
      const text = raw[i];
      if (text === null || text === undefined) return;
      const parsed = ExtensionCatalogSchema.safeParse(safeJson(text));
      if (!parsed.success) return logger.warn({ extension: extension.name }, 'mcp extension catalog is malformed');
      entries.push({ extension, catalog: parsed.data });
    });
    return serveCatalogs(
      entries,
      { tools: this.options.reservedToolNames, prompts: this.options.reservedPromptNames ?? [] },
      (fields, reason) => this.refused(fields, reason),
    );
  }

  /** Logs a refused catalog entry once per extension, kind and value (the catalog is read on every list). */
  private refused(fields: { extension: string; kind: string; value: string }, reason: string): void {
    const key = `${fields.extension}\n${fields.kind}\n${fields.value}`;
    if (this.reported.has(key)) return;
    if (this.reported.size >= 1000) this.reported.clear();
    this.reported.add(key);
    this.options.logger.warn({ ...fields, reason }, 'mcp extension catalog entry not served');
  }

  /**
   * Relays one call to extension `name` and resolves with its result.
   *
   * @param watchLiveness also give up (with {@link ExtensionUnavailable}) as soon as the
   *   extension stops announcing its catalog — a killed service — instead of at the timeout
   * @throws JsonRpcError the extension's error; {@link ExtensionUnavailable} when it does not
   *   answer within `callTimeoutMs` (or stopped announcing); the abort reason when the client cancels.
   */
  async call(
    name: string,
    method: ExtensionCall['method'],
    params: Record<string, unknown>,
    ctx: McpCallContext,
    clientCapabilities: Record<string, unknown>,
    watchLiveness = false,
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
      replyTo: hub.replyChannel,
      deadline: Date.now() + callTimeoutMs,
    };
    const reply = (message: ExtensionReply): void =>
      void redis.publish(callChannel(prefix, callId), JSON.stringify(message)).catch(() => undefined);
    let removeRelay: () => void = () => undefined;
    let timer: NodeJS.Timeout | undefined;
    let liveness: NodeJS.Timeout | undefined;
    let onAbort: () => void = () => undefined;
    try {
      return await new Promise<Record<string, unknown>>((resolve, reject) => {
        removeRelay = hub.onRelay(callId, (raw) => {
          const event = ExtensionEventSchema.safeParse(raw);
          if (event.success) this.onEvent(event.data, ctx, reply, resolve, reject);
        });
        timer = setTimeout(
          () => reject(new ExtensionUnavailable(name, `Extension ${name} did not answer within ${callTimeoutMs} ms.`)),
          callTimeoutMs,
        );
        if (watchLiveness)
          liveness = setInterval(() => {
            void this.isAnnounced(name).then(
              (up) => {
                if (!up) reject(new ExtensionUnavailable(name, `Extension ${name} stopped while serving the call.`));
              },
              () => undefined,
            );
          }, LIVENESS_CHECK_MS);
        onAbort = () => {
          reply({ type: 'cancel' });
          reject(new Error('The request was cancelled.'));
        };
        if (ctx.signal.aborted) return onAbort();
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        redis
          .lpush(callQueueKey(prefix, name), JSON.stringify(call))
          .catch(() => reject(new ExtensionUnavailable(name, `Extension ${name} could not be reached.`)));
      });
    } finally {
      removeRelay();
      clearTimeout(timer);
      clearInterval(liveness);
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

/** How often a call that watches liveness checks that its extension still announces, ms. */
const LIVENESS_CHECK_MS = 1000;

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
