import { Redis } from 'ioredis';
import {
  callChannel,
  callQueueKey,
  catalogKey,
  ExtensionCallSchema,
  ExtensionReplySchema,
  type ExtensionCall,
  type ExtensionCatalog,
  type ExtensionEvent,
} from '@dagu-mcp/contracts';
import {
  ExtensionToolError,
  type ExtensionCallContext,
  type ExtensionPromptDefinition,
  type ExtensionResourceDefinition,
  type ExtensionToolDefinition,
  type ToolResult,
} from './extension-types';

/** Options of {@link ExtensionService}. */
export interface ExtensionServiceOptions {
  readonly redisUrl: string;
  /** The platform's `BUS_PREFIX`. */
  readonly prefix: string;
  /** The service's name: its tools are served as `<name>.<tool>`; what an admin enables. */
  readonly name: string;
  readonly tools: readonly ExtensionToolDefinition[];
  readonly resources?: readonly ExtensionResourceDefinition[];
  readonly prompts?: readonly ExtensionPromptDefinition[];
  /** URI prefixes the service's resources live under, e.g. `warehouse://`. */
  readonly uriPrefixes?: readonly string[];
  /** How often the catalog is announced again, ms. Default 1000. */
  readonly announceEveryMs?: number;
  /** How long an announcement lives, ms: a stopped service disappears this long after its last one. Default 3000. */
  readonly catalogTtlMs?: number;
  /** Calls served at once; more wait in the queue. Default 16. */
  readonly concurrency?: number;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * An extension service's side of the gateway protocol: announces the
 * catalog (a key with a short TTL, refreshed), takes calls from its queue, runs the
 * declared handler with the caller's principal and deadline, and answers on the gateway
 * replica's channel. A call whose deadline passed is dropped unserved. Tool handlers get
 * validated arguments (the gateway checked role and schema before queueing).
 */
export class ExtensionService {
  private readonly commands: Redis;
  private readonly blocking: Redis;
  private readonly subscriber: Redis;
  private readonly aborts = new Map<string, AbortController>();
  private running = false;
  private announcer: NodeJS.Timeout | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private active = 0;

  constructor(private readonly options: ExtensionServiceOptions) {
    this.commands = new Redis(options.redisUrl, { lazyConnect: true });
    this.blocking = new Redis(options.redisUrl, { lazyConnect: true });
    this.subscriber = new Redis(options.redisUrl, { lazyConnect: true });
    this.subscriber.on('message', (channel: string, raw: string) => this.onReply(channel, raw));
  }

  /** The catalog announced (MCP `Tool`, `Resource`, `Prompt` objects plus each tool's `minRole`). */
  catalog(): ExtensionCatalog {
    const { tools, resources = [], prompts = [], uriPrefixes = [] } = this.options;
    return {
      tools: tools.map((t) => ({
        name: t.name,
        ...(t.title !== undefined ? { title: t.title } : {}),
        description: t.description,
        inputSchema: { ...t.inputSchema },
        ...(t.annotations !== undefined ? { annotations: { ...t.annotations } } : {}),
        minRole: t.minRole ?? 'viewer',
      })),
      resources: resources.map(({ read: _read, ...r }) => ({ ...r })),
      resourceTemplates: [],
      prompts: prompts.map(({ get: _get, arguments: args, ...p }) => ({
        ...p,
        ...(args !== undefined ? { arguments: args.map((a) => ({ ...a })) } : {}),
      })),
      uriPrefixes: [...uriPrefixes],
    };
  }

  /** Connects, announces and starts taking calls. */
  async start(): Promise<void> {
    await Promise.all([this.commands.connect(), this.blocking.connect(), this.subscriber.connect()]);
    this.running = true;
    await this.announce();
    this.announcer = setInterval(
      () => void this.announce().catch(() => undefined),
      this.options.announceEveryMs ?? 1000,
    );
    this.loopDone = this.loop();
  }

  /** Stops announcing (the gateway drops the tools at once), lets running calls finish, disconnects. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.announcer);
    await this.commands.del(catalogKey(this.options.prefix, this.options.name)).catch(() => undefined);
    await this.loopDone;
    for (let i = 0; i < 100 && this.active > 0; i++) await new Promise((r) => setTimeout(r, 50));
    this.blocking.disconnect();
    this.subscriber.disconnect();
    this.commands.disconnect();
  }

  private async announce(): Promise<void> {
    const key = catalogKey(this.options.prefix, this.options.name);
    await this.commands.set(key, JSON.stringify(this.catalog()), 'PX', this.options.catalogTtlMs ?? 3000);
  }

  private async loop(): Promise<void> {
    const queue = callQueueKey(this.options.prefix, this.options.name);
    while (this.running) {
      if (this.active >= (this.options.concurrency ?? 16)) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const popped = await this.blocking.brpop(queue, 1).catch(() => null);
      if (popped === null) continue;
      const call = ExtensionCallSchema.safeParse(safeJson(popped[1]));
      if (call.success && call.data.deadline > Date.now()) void this.serve(call.data);
    }
  }

  private async serve(call: ExtensionCall): Promise<void> {
    this.active++;
    const channel = callChannel(this.options.prefix, call.callId);
    const abort = new AbortController();
    this.aborts.set(channel, abort);
    const expiry = setTimeout(() => abort.abort(), Math.max(0, call.deadline - Date.now()));
    const emit = async (event: DistributiveOmit<ExtensionEvent, 't' | 'callId'>): Promise<void> => {
      await this.commands.publish(call.replyTo, JSON.stringify({ t: 'ext', callId: call.callId, ...event }));
    };
    const progressToken = progressTokenOf(call.params);
    const ctx: ExtensionCallContext = {
      principal: call.principal,
      deadline: call.deadline,
      signal: abort.signal,
      sessionId: call.sessionId,
      notify: (method, params) => emit({ type: 'notify', notification: { method, params } }),
      progress: async (progress, total, message) => {
        if (progressToken === undefined) return;
        await emit({
          type: 'notify',
          notification: {
            method: 'notifications/progress',
            params: {
              progressToken,
              progress,
              ...(total !== undefined ? { total } : {}),
              ...(message ? { message } : {}),
            },
          },
        });
      },
    };
    try {
      await this.subscriber.subscribe(channel);
      const result = await this.dispatch(call, ctx);
      await emit({ type: 'result', result });
    } catch (err) {
      await emit({
        type: 'error',
        error: { code: -32603, message: err instanceof Error ? err.message : String(err) },
      }).catch(() => undefined);
    } finally {
      clearTimeout(expiry);
      this.aborts.delete(channel);
      this.active--;
      await this.subscriber.unsubscribe(channel).catch(() => undefined);
    }
  }

  private async dispatch(call: ExtensionCall, ctx: ExtensionCallContext): Promise<Record<string, unknown>> {
    const params = call.params;
    switch (call.method) {
      case 'tools/call': {
        const tool = this.options.tools.find((t) => t.name === params.name);
        if (tool === undefined) throw new Error(`Unknown tool: ${String(params.name)}`);
        const args = isRecord(params.arguments) ? params.arguments : {};
        try {
          return asToolResult(await tool.handle(args, ctx));
        } catch (err) {
          if (!(err instanceof ExtensionToolError)) throw err;
          return { isError: true, content: [{ type: 'text', text: err.message }] };
        }
      }
      case 'resources/read': {
        const resource = this.options.resources?.find((r) => r.uri === params.uri);
        if (resource === undefined) throw new Error(`Unknown resource: ${String(params.uri)}`);
        const text = await resource.read(ctx);
        return { contents: [{ uri: resource.uri, mimeType: resource.mimeType ?? 'text/plain', text }] };
      }
      case 'prompts/get': {
        const prompt = this.options.prompts?.find((p) => p.name === params.name);
        if (prompt === undefined) throw new Error(`Unknown prompt: ${String(params.name)}`);
        const raw = isRecord(params.arguments) ? params.arguments : {};
        const args = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]));
        const text = await prompt.get(args, ctx);
        return { messages: [{ role: 'user', content: { type: 'text', text } }] };
      }
      default:
        // completion, subscriptions: nothing to offer (an empty answer, not an error).
        return call.method === 'completion/complete' ? { completion: { values: [] } } : {};
    }
  }

  private onReply(channel: string, raw: string): void {
    const reply = ExtensionReplySchema.safeParse(safeJson(raw));
    if (reply.success && reply.data.type === 'cancel') this.aborts.get(channel)?.abort();
  }
}

function asToolResult(value: ToolResult | Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(value.content)) return { ...value };
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params._meta;
  if (!isRecord(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
