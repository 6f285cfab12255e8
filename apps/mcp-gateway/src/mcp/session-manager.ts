import type { Request, Response } from 'express';
import { Redis } from 'ioredis';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpDispatcher } from './transport/dispatcher';
import { EventLog } from './transport/event-log';
import { McpKeys, STANDALONE_STREAM } from './transport/redis-keys';
import { DEFAULT_REPLICA_LEASE_MS, ReplicaHub } from './transport/replica-hub';
import { SessionStore } from './transport/session-store';
import { StreamableHttpHandler } from './transport/streamable-http';
import { ListenRegistry } from './transport/listen-registry';

/** Settings of {@link McpSessionManager}; defaults live in config.ts. */
export interface McpSessionManagerOptions {
  readonly redisUrl: string;
  /** Bus prefix; every key and channel lives under `<prefix>:mcp:` (redis-keys.ts). */
  readonly prefix: string;
  readonly logger: Logger;
  /** A session unused this long is dropped by Redis, ms. Open streams count as use. */
  readonly idleTtlMs: number;
  /** How long a replica reuses a loaded session record without Redis, ms; 0: never (session-cache.ts). */
  readonly sessionCacheMs?: number;
  /** SSE keep-alive comment interval, ms (spec 020: ≤ 30 s). */
  readonly keepAliveMs: number;
  /** Reconnection delay announced with priming events (`retry`), ms. */
  readonly retryMs: number;
  /** How long SSE events are kept for `Last-Event-ID` resumption, ms. */
  readonly eventRetentionMs: number;
  /** Approximate cap on kept events per stream. */
  readonly eventMaxLen: number;
  /** How long a server→client request (sampling, elicitation) waits for the client, ms. */
  readonly clientRequestTimeoutMs: number;
  /** Lifetime of this replica's liveness key, ms (replica-hub.ts); default 3000. */
  readonly replicaLeaseMs?: number;
  /** Most messages in one 2025-03-26 batch (streamable-http.ts default when unset). */
  readonly maxBatchMessages?: number;
  /** Most bytes of a session's client info and capabilities (streamable-http.ts default when unset). */
  readonly maxSessionRecordBytes?: number;
  /** Most resource subscriptions of one session (session-store.ts default when unset). */
  readonly maxSubscriptions?: number;
  /** Most live MCP sessions of one principal (session-store.ts default when unset). */
  readonly maxSessionsPerPrincipal?: number;
  /** Builds the JSON-RPC dispatcher once the Redis parts exist. */
  readonly createDispatcher: (parts: {
    readonly sessions: SessionStore;
    readonly hub: ReplicaHub;
    readonly redis: Redis;
  }) => McpDispatcher;
}

/**
 * The MCP sessions of the gateway, kept in Redis so that any replica serves
 * any request of any session (docs/architecture.md "Sessions and scale"; the
 * transport and its design are described in docs/mcp-transport.md).
 *
 * Holds one command connection and, through {@link ReplicaHub}, one
 * subscriber connection; a sweeper refreshes the idle TTL of sessions with an
 * open stream or request here and frees the local resources of sessions that
 * ended or expired elsewhere.
 */
export class McpSessionManager {
  private redis: Redis | undefined;
  private hub: ReplicaHub | undefined;
  private store: SessionStore | undefined;
  private events: EventLog | undefined;
  private handler: StreamableHttpHandler | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly keys: McpKeys;
  /** This replica's `subscriptions/listen` streams (stateless era); fed by {@link listenersUpdated}. */
  private readonly listeners = new ListenRegistry();

  constructor(private readonly options: McpSessionManagerOptions) {
    this.keys = new McpKeys(options.prefix);
  }

  /** Connects to Redis and subscribes; resolves once ready (waits while Redis is down). */
  async start(): Promise<void> {
    const { options, keys } = this;
    const redis = new Redis(options.redisUrl, {
      connectionName: `${options.prefix}:gateway:mcp`,
      maxRetriesPerRequest: 2,
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt - 1, 10), 1000),
    });
    redis.on('error', (error: Error) =>
      options.logger.debug({ error: error.message }, 'mcp session store connection error'),
    );
    this.redis = redis;
    const hub = new ReplicaHub({
      redisUrl: options.redisUrl,
      keys,
      logger: options.logger,
      publisher: redis,
      leaseMs: options.replicaLeaseMs ?? DEFAULT_REPLICA_LEASE_MS,
    });
    await hub.start();
    this.hub = hub;
    const store = new SessionStore(
      redis,
      keys,
      options.idleTtlMs,
      options.sessionCacheMs ?? 0,
      (sid) => hub.announceSessionChange(sid),
      options.maxSubscriptions,
      options.maxSessionsPerPrincipal,
    );
    hub.onSessionChange((sid) => store.forget(sid));
    const events = new EventLog(redis, keys, {
      retentionMs: options.eventRetentionMs,
      maxLen: options.eventMaxLen,
      indexTtlMs: Math.max(options.eventRetentionMs, options.idleTtlMs),
    });
    this.store = store;
    this.events = events;
    this.handler = new StreamableHttpHandler({
      dispatcher: options.createDispatcher({ sessions: store, hub, redis }),
      sessions: store,
      events,
      hub,
      logger: options.logger,
      keepAliveMs: options.keepAliveMs,
      retryMs: options.retryMs,
      clientRequestTimeoutMs: options.clientRequestTimeoutMs,
      pollMs: Math.min(options.keepAliveMs, 5_000),
      listeners: this.listeners,
      ...(options.maxBatchMessages !== undefined ? { maxBatchMessages: options.maxBatchMessages } : {}),
      ...(options.maxSessionRecordBytes !== undefined ? { maxSessionRecordBytes: options.maxSessionRecordBytes } : {}),
    });
    const every = Math.max(100, Math.min(Math.floor(options.idleTtlMs / 3), 5_000));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  /** Serves one POST, GET or DELETE on the MCP endpoint (`req.body` parsed for POST). */
  async handle(req: Request, res: Response): Promise<void> {
    if (this.handler === undefined) throw new Error('McpSessionManager.start() has not run.');
    await this.handler.handle(req, res);
  }

  /** Whether any session may be subscribed to one of `uris` (see SessionStore.anySubscribed). */
  async anySubscribed(uris: readonly string[]): Promise<boolean> {
    return this.requireStore().anySubscribed(uris);
  }

  /**
   * Sends `notifications/resources/updated {uri}` to every live session
   * subscribed to `uri` (dagu-model §8), on its standalone stream, whichever
   * replica holds that stream. Returns how many sessions it went to.
   */
  async resourceUpdated(uri: string): Promise<number> {
    const sessions = await this.requireStore().subscribersOf(uri);
    await Promise.all(
      sessions.map((sid) => this.notifySession(sid, { method: 'notifications/resources/updated', params: { uri } })),
    );
    return sessions.length;
  }

  /**
   * Sends `notifications/resources/updated {uri}` to the `subscriptions/listen`
   * streams open on this replica whose filter names `uri` (stateless era).
   * Every replica calls it for every run event it hears, so no claim is needed.
   */
  listenersUpdated(uri: string): number {
    return this.listeners.resourceUpdated(uri);
  }

  /**
   * Makes this endpoint's `subscriptions/listen` honour `toolsListChanged`;
   * whoever calls it then calls {@link listenersToolsChanged} on every change.
   */
  feedToolListChanges(): void {
    this.listeners.feedToolListChanges();
  }

  /** Sends `notifications/tools/list_changed` to this replica's listen streams that asked for it. */
  listenersToolsChanged(): number {
    return this.listeners.toolsListChanged();
  }

  /**
   * `true` for exactly one caller per `key` over all replicas within `ttlMs`
   * (Redis `SET NX` of `<prefix>:mcp:once:<key>`): which replica relays a
   * shared event (run-subscriptions.ts).
   */
  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    if (this.redis === undefined) throw new Error('McpSessionManager.start() has not run.');
    return (await this.redis.set(`${this.options.prefix}:mcp:once:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** Sends one notification to a session's standalone (GET) stream; kept for resumption like every event. */
  async notifySession(sessionId: string, notification: ServerNotification): Promise<void> {
    if (this.events === undefined) throw new Error('McpSessionManager.start() has not run.');
    await this.events.append(sessionId, STANDALONE_STREAM, { jsonrpc: '2.0', ...notification });
  }

  /**
   * The live sessions of one principal, on any replica (the principal's
   * session index, pruned of ended and expired ones): whom a published
   * agent's `notifications/tools/list_changed` goes to.
   */
  async liveSessionsOf(principalId: string): Promise<string[]> {
    if (this.redis === undefined) throw new Error('McpSessionManager.start() has not run.');
    const ids = await this.redis.zrange(this.keys.principalSessions(principalId), 0, -1);
    const alive = await this.requireStore().exists(ids);
    return ids.filter((_, i) => alive[i] === true);
  }

  /**
   * The live sessions of one principal that have an open stream or a running request on this
   * replica: whom this replica tells of a change it has itself taken in (a published agent's
   * rebuilt catalog), so the client's next request here sees the new state.
   */
  async localSessionsOf(principalId: string): Promise<string[]> {
    const local = new Set(this.hub?.activeSessions() ?? []);
    if (local.size === 0) return [];
    return (await this.liveSessionsOf(principalId)).filter((id) => local.has(id));
  }

  /**
   * The sessions live on this replica (an open stream or a running request here) of a principal
   * or of the people signed in through it (`sessionOwnerOf`: `<principalId>#user:<id>`):
   * a published agent's key sessions and its people's. One Redis read per local session; called
   * when an agent's catalog changes, not per request.
   */
  async localSessionsThrough(principalId: string): Promise<string[]> {
    const local = this.hub?.activeSessions() ?? [];
    const store = this.requireStore();
    const owners = await Promise.all(local.map((id) => store.ownerOf(id)));
    return local.filter((_, i) => owners[i] === principalId || owners[i]?.startsWith(`${principalId}#`) === true);
  }

  /**
   * Sends `notification` to every session live on this replica (an open stream or a running
   * request here); each replica does the same for its own, so every live session hears it
   * (a session busy on two replicas may hear it twice — list_changed is idempotent).
   * Returns how many sessions it went to.
   */
  async notifyLocalSessions(notification: ServerNotification): Promise<number> {
    const ids = this.hub?.activeSessions() ?? [];
    await Promise.all(ids.map((id) => this.notifySession(id, notification).catch(() => undefined)));
    return ids.length;
  }

  /** Sessions with an open stream or a running request on this replica. */
  get size(): number {
    return this.hub?.activeSessions().length ?? 0;
  }

  /** Sizes of the local registries (leak checks in tests). */
  stats(): Record<string, number> {
    return {
      ...(this.hub?.stats() ?? {}),
      listeners: this.listeners.size,
      sweeping: this.sweeper === undefined ? 0 : 1,
    };
  }

  /**
   * First step of a graceful shutdown: ends the GET streams held here so the
   * HTTP server can close (their clients resume on another replica with
   * `Last-Event-ID`); running requests finish normally.
   */
  closeStreams(): void {
    this.hub?.closeStreams();
    this.handler?.closeStreams();
  }

  /** Closes local streams and requests and both connections (graceful shutdown). Sessions stay in Redis. */
  async closeAll(): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.hub?.close();
    const redis = this.redis;
    this.redis = undefined;
    if (redis !== undefined) await redis.quit().catch(() => redis.disconnect(false));
  }

  /** Refreshes sessions in use here; frees the local resources of those gone from Redis. */
  private async sweep(): Promise<void> {
    const hub = this.hub;
    const store = this.store;
    if (hub === undefined || store === undefined) return;
    const active = hub.activeSessions();
    if (active.length === 0) return;
    try {
      const alive = await store.exists(active);
      const gone = active.filter((_, i) => alive[i] !== true);
      for (const sid of gone) hub.endLocally(sid);
      await store.touch(active.filter((_, i) => alive[i] === true));
    } catch (err) {
      this.options.logger.debug({ err }, 'mcp session sweep failed');
    }
  }

  private requireStore(): SessionStore {
    if (this.store === undefined) throw new Error('McpSessionManager.start() has not run.');
    return this.store;
  }
}
