import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { z } from 'zod';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@dagu-mcp/runtime';
import { ClientAwaits, type ClientResponse } from './client-awaits';
import type { McpKeys } from './redis-keys';

/**
 * This replica's link to the others, over Redis pub/sub (docs/architecture.md
 * "Sessions and scale"). One subscriber connection carries:
 *
 * - `<p>:mcp:control` (every replica): `{t:'cancel', s, r}` aborts request `r`
 *   of session `s` wherever it runs; `{t:'end', s}` ends a session
 *   everywhere (its in-flight requests are aborted, its streams closed);
 *   `{t:'changed', s}` a session's record changed (session-store.ts): both
 *   go to the {@link ReplicaHub.onSessionChange} listeners;
 * - `<p>:mcp:replica:<id>` (this replica only): `{t:'response', s, m}` a
 *   client's answer to a server→client request this replica awaits;
 *   `{t:'ext', …}` extension relay events (extensions/);
 * - `<p>:mcp:{sid}:wake:<stream>` while a local SSE stream reads that stream.
 *
 * Its liveness lease `<p>:mcp:replica:<id>:alive` (PX `leaseMs`, renewed
 * every third of it) tells the others it is alive: a replica resuming an SSE
 * stream of a request this one served answers it when the lease lapsed
 * (orphan-check.ts).
 *
 * Everything local (in-flight requests, stream closers, wake listeners) is
 * kept in maps that are emptied as requests and streams finish, so no timer
 * or listener outlives its session.
 */
export class ReplicaHub {
  /** This replica's id (12 hex characters), part of every server→client request id it mints. */
  readonly replicaId = randomBytes(6).toString('hex');
  readonly awaits: ClientAwaits;
  private readonly inflight = new Map<string, AbortController>();
  private readonly sessionClosers = new Map<string, Set<() => void>>();
  private readonly wakeListeners = new Map<string, Set<() => void>>();
  private readonly relayHandlers = new Map<string, (event: unknown) => void>();
  private readonly subscribing = new Map<string, Promise<void>>();
  private readonly sessionChangeListeners: ((sid: string) => void)[] = [];
  /** endSession calls waiting for their own `{t:'end'}` to come back on the control channel. */
  private readonly endEchoes = new Map<string, Set<() => void>>();
  private subscriber: Redis | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      readonly redisUrl: string;
      readonly keys: McpKeys;
      readonly logger: Logger;
      readonly publisher: Redis;
      /** Lifetime of the liveness lease, ms (`MCP_REPLICA_LEASE_MS`); default {@link DEFAULT_REPLICA_LEASE_MS}. */
      readonly leaseMs?: number;
    },
  ) {
    this.awaits = new ClientAwaits(this.replicaId);
  }

  /** This replica's own channel (`<p>:mcp:replica:<id>`): where extension relay events for its calls are published. */
  get replyChannel(): string {
    return this.options.keys.replica(this.replicaId);
  }

  /** Connects the subscriber and joins the control and replica channels; resolves once subscribed. */
  async start(): Promise<void> {
    const { redisUrl, keys, logger } = this.options;
    const subscriber = new Redis(redisUrl, {
      connectionName: `${keys.prefix}:gateway:mcp-hub:${this.replicaId}`,
      autoResubscribe: true,
      maxRetriesPerRequest: null,
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt - 1, 10), 1000),
    });
    subscriber.on('error', (error: Error) => logger.debug({ error: error.message }, 'mcp hub connection error'));
    subscriber.on('message', (channel: string, raw: string) => this.onMessage(channel, raw));
    this.subscriber = subscriber;
    await subscriber.subscribe(keys.control(), keys.replica(this.replicaId));
    await this.renewLease();
    this.leaseTimer = setInterval(() => void this.renewLease(), Math.floor(this.leaseMs / 3));
    this.leaseTimer.unref();
  }

  /** Lifetime of the liveness lease, ms. */
  get leaseMs(): number {
    return this.options.leaseMs ?? DEFAULT_REPLICA_LEASE_MS;
  }

  /** True while replica `replicaId`'s liveness lease is held (this replica: always). */
  async isAlive(replicaId: string): Promise<boolean> {
    if (replicaId === this.replicaId) return true;
    return (await this.options.publisher.exists(this.options.keys.alive(replicaId))) === 1;
  }

  private async renewLease(): Promise<void> {
    const key = this.options.keys.alive(this.replicaId);
    // A failed renewal (Redis down) is retried on the next tick; a lapse only matters to resumed streams.
    await this.options.publisher.set(key, '1', 'PX', this.leaseMs).catch(() => undefined);
  }

  /** Aborts every local request, closes every local stream and the connection. Idempotent. */
  async close(): Promise<void> {
    if (this.leaseTimer !== undefined) clearInterval(this.leaseTimer);
    this.leaseTimer = undefined;
    await this.options.publisher.del(this.options.keys.alive(this.replicaId)).catch(() => undefined);
    for (const controller of this.inflight.values()) controller.abort();
    for (const closers of [...this.sessionClosers.values()]) for (const close of [...closers]) close();
    this.awaits.rejectAll(new Error('The gateway is shutting down.'));
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber !== undefined) await subscriber.quit().catch(() => subscriber.disconnect(false));
  }

  /** Ends every GET stream held here (shutdown: their clients resume on another replica); requests go on. */
  closeStreams(): void {
    for (const closers of [...this.sessionClosers.values()]) for (const close of [...closers]) close();
  }

  /** Registers a request being served here; `release()` must be called when it is answered. */
  trackRequest(sid: string, id: RequestId): { signal: AbortSignal; release: () => void } {
    const key = requestKey(sid, id);
    const controller = new AbortController();
    this.inflight.set(key, controller);
    return {
      signal: controller.signal,
      release: () => {
        if (this.inflight.get(key) === controller) this.inflight.delete(key);
      },
    };
  }

  /** `notifications/cancelled`: aborts request `id` of `sid` on whichever replica serves it. */
  async cancelRequest(sid: string, id: RequestId): Promise<void> {
    this.inflight.get(requestKey(sid, id))?.abort();
    await this.options.publisher.publish(this.options.keys.control(), JSON.stringify({ t: 'cancel', s: sid, r: id }));
  }

  /** Calls `listener(sid)` whenever a session ends or its record changes, on any replica (local memos drop it). */
  onSessionChange(listener: (sid: string) => void): void {
    this.sessionChangeListeners.push(listener);
  }

  /** Tells every replica that session `sid`'s record changed (`{t:'changed', s}`): their listeners drop their memo of it. */
  async announceSessionChange(sid: string): Promise<void> {
    await this.options.publisher.publish(this.options.keys.control(), JSON.stringify({ t: 'changed', s: sid }));
  }

  /**
   * Ends a session on every replica: aborts its requests and closes its streams. Resolves once
   * this replica has heard its own `{t:'end'}` back on the control channel (at most
   * {@link END_ECHO_WAIT_MS}): Redis hands one PUBLISH to every subscriber at once, so by then
   * the other replicas have it too, and a request the client sends after the DELETE's answer
   * finds no cached record of the session anywhere (docs/mcp-transport.md "Session cache").
   */
  async endSession(sid: string): Promise<void> {
    this.endLocally(sid);
    let heard: () => void = () => undefined;
    const echo = new Promise<void>((resolve) => {
      const timer = setTimeout(() => heard(), END_ECHO_WAIT_MS);
      heard = () => {
        clearTimeout(timer);
        const waiting = this.endEchoes.get(sid);
        waiting?.delete(heard);
        if (waiting?.size === 0) this.endEchoes.delete(sid);
        resolve();
      };
      const waiting = this.endEchoes.get(sid) ?? new Set<() => void>();
      waiting.add(heard);
      this.endEchoes.set(sid, waiting);
    });
    try {
      await this.options.publisher.publish(this.options.keys.control(), JSON.stringify({ t: 'end', s: sid }));
    } catch (err) {
      heard();
      throw err;
    }
    await echo;
  }

  /** Closes the local resources of a session (also used when the sweeper finds it expired). */
  endLocally(sid: string): void {
    const prefix = `${sid}\n`;
    for (const [key, controller] of this.inflight) if (key.startsWith(prefix)) controller.abort();
    for (const close of [...(this.sessionClosers.get(sid) ?? [])]) close();
    this.awaits.rejectSession(sid, new Error('The session ended.'));
  }

  /** Runs `close` when the session ends; returns the remover. */
  onSessionEnd(sid: string, close: () => void): () => void {
    return addTo(this.sessionClosers, sid, close);
  }

  /** Sessions with something open on this replica (streams or requests), for the TTL refresh and sweeper. */
  activeSessions(): string[] {
    const ids = new Set(this.sessionClosers.keys());
    for (const key of this.inflight.keys()) ids.add(key.slice(0, key.indexOf('\n')));
    return [...ids];
  }

  /** Calls `listener` on every wake of a stream; resolves with the remover once subscribed. */
  async watch(sid: string, stream: string, listener: () => void): Promise<() => void> {
    const channel = this.options.keys.wake(sid, stream);
    if (!this.wakeListeners.has(channel)) {
      const subscribed = this.subscriber?.subscribe(channel).then(() => undefined) ?? Promise.resolve();
      this.subscribing.set(channel, subscribed);
      void subscribed.finally(() => {
        if (this.subscribing.get(channel) === subscribed) this.subscribing.delete(channel);
      });
    }
    const remove = addTo(this.wakeListeners, channel, listener);
    // A second watcher of the channel waits for the first one's SUBSCRIBE too.
    await this.subscribing.get(channel)?.catch(() => undefined);
    return () => {
      remove();
      if (!this.wakeListeners.has(channel)) void this.subscriber?.unsubscribe(channel).catch(() => undefined);
    };
  }

  /** Routes a client's response to the replica awaiting it (here, or by its replica channel). */
  async deliverClientResponse(sid: string, response: ClientResponse): Promise<void> {
    const owner = ClientAwaits.ownerOf(response.id);
    if (owner === undefined) return;
    if (owner === this.replicaId) return void this.awaits.settle(sid, response);
    await this.options.publisher.publish(
      this.options.keys.replica(owner),
      JSON.stringify({ t: 'response', s: sid, m: response }),
    );
  }

  /** Receives extension relay events for `callId` (see extensions/); returns the remover. */
  onRelay(callId: string, handler: (event: unknown) => void): () => void {
    this.relayHandlers.set(callId, handler);
    return () => {
      if (this.relayHandlers.get(callId) === handler) this.relayHandlers.delete(callId);
    };
  }

  /** Sizes of the local registries (leak checks in tests). */
  stats(): Record<string, number> {
    return {
      inflight: this.inflight.size,
      sessionsWithStreams: this.sessionClosers.size,
      wakeChannels: this.wakeListeners.size,
      relays: this.relayHandlers.size,
      awaits: this.awaits.size,
    };
  }

  private onMessage(channel: string, raw: string): void {
    const { keys } = this.options;
    if (channel !== keys.control() && channel !== keys.replica(this.replicaId)) {
      // A wake channel; one that arrives just after its last watcher left is dropped.
      for (const listener of [...(this.wakeListeners.get(channel) ?? [])]) listener();
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = HubMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.options.logger.warn({ channel }, 'mcp hub message is malformed');
      return;
    }
    const message = parsed.data;
    if (message.t === 'cancel') this.inflight.get(requestKey(message.s, message.r))?.abort();
    else if (message.t === 'end') {
      for (const listener of this.sessionChangeListeners) listener(message.s);
      this.endLocally(message.s);
      for (const heard of [...(this.endEchoes.get(message.s) ?? [])]) heard();
    } else if (message.t === 'changed') for (const listener of this.sessionChangeListeners) listener(message.s);
    else if (message.t === 'response') this.awaits.settle(message.s, message.m);
    else this.relayHandlers.get(message.callId)?.(json);
  }
}

/** Longest endSession waits for its own `{t:'end'}` to come back before answering anyway, ms. */
const END_ECHO_WAIT_MS = 250;

/** Default of the replica liveness lease, ms (`MCP_REPLICA_LEASE_MS`). */
export const DEFAULT_REPLICA_LEASE_MS = 3_000;

const Id = z.union([z.string(), z.number().int()]);
const HubMessageSchema = z.union([
  z.object({ t: z.literal('cancel'), s: z.string(), r: Id }),
  z.object({ t: z.literal('end'), s: z.string() }),
  z.object({ t: z.literal('changed'), s: z.string() }),
  z.object({
    t: z.literal('response'),
    s: z.string(),
    m: z.object({
      id: Id,
      result: z.record(z.string(), z.unknown()).optional(),
      error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
    }),
  }),
  z.looseObject({ t: z.literal('ext'), callId: z.string() }),
]);

function requestKey(sid: string, id: RequestId): string {
  return `${sid}\n${JSON.stringify(id)}`;
}

function addTo<V>(map: Map<string, Set<V>>, key: string, value: V): () => void {
  const set = map.get(key) ?? new Set<V>();
  set.add(value);
  map.set(key, set);
  return () => {
    set.delete(value);
    if (set.size === 0 && map.get(key) === set) map.delete(key);
  };
}
