import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Redis } from 'ioredis';
import {
  agentOps,
  AGENT_SLUG_PATTERN,
  DaguError,
  isValidWikiWorkspace,
  SYSTEM_PRINCIPAL,
  type AgentWithTools,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { AgentTool } from './agent-tool-base';

/** A published agent's catalog as this replica serves it. */
export interface AgentCatalog {
  readonly agent: AgentWithTools;
  readonly tools: ReadonlyMap<string, AgentTool>;
  /** `tools/list`'s answer, in catalog order. */
  readonly definitions: readonly Tool[];
  /** SHA-256 of `definitions`: what tells a changed tool list (`notifications/tools/list_changed`). */
  readonly fingerprint: string;
}

/** What {@link AgentCatalogCache} is built from. */
export interface AgentCatalogCacheOptions {
  readonly bus: BusClient;
  /** Builds an agent's tools (agent-tools.ts `buildAgentTools`). */
  readonly build: (agent: AgentWithTools) => Promise<ReadonlyMap<string, AgentTool>>;
  readonly publisher: Redis;
  /** A connection of its own, for the change channel. */
  readonly subscriber: Redis;
  /** The change channel, `<BUS_PREFIX>:agents:changed`. */
  readonly channel: string;
  /** `AGENT_CATALOG_REFRESH_MS`: every cached catalog is rebuilt this often, ms. */
  readonly refreshMs: number;
  /** Called when a rebuilt catalog's tool list differs from the one served before (on every replica that had it). */
  readonly onToolsChanged: (catalog: AgentCatalog, before: AgentCatalog) => Promise<void>;
  readonly logger: Logger;
}

/** How long an address that names no published agent is answered 404 without asking agent-service, ms. */
const MISSING_TTL_MS = 5_000;
/** Most remembered missing addresses per replica (a flood of random addresses cannot grow memory past it). */
const MISSING_MAX = 10_000;

/** The cache key of an agent address. */
const pathKey = (workspace: string, slug: string): string => `${workspace}/${slug}`;

/**
 * The per-replica cache of published agents' catalogs.
 * An address is loaded from agent-service on first use. One that names no
 * published agent (unknown, draft, disabled) is answered from memory for 5 s
 * (404s come before authentication, so a flood of them must not reach
 * agent-service each time); a publication's announcement clears that on
 * every replica, so it is seen at once. A change made through any replica is
 * announced on a Redis channel and every replica that holds the agent
 * rebuilds it; all of them also rebuild every `refreshMs`, which catches
 * what no announcement covers (a DAG's params changed, a missed message).
 * A rebuild whose tool list differs calls `onToolsChanged`.
 */
export class AgentCatalogCache {
  private readonly byPath = new Map<string, AgentCatalog>();
  private readonly pathById = new Map<string, string>();
  private readonly loading = new Map<string, Promise<AgentCatalog | undefined>>();
  /** Addresses found naming no published agent, until when (epoch ms); an announcement clears its own. */
  private readonly missing = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AgentCatalogCacheOptions) {}

  /** Subscribes to changes and starts the periodic refresh. */
  async start(): Promise<void> {
    const { subscriber, channel } = this.options;
    subscriber.on('message', (from: string, path: string) => {
      if (from !== channel) return;
      this.missing.delete(path);
      void this.reload(path);
    });
    // A reconnected subscriber may have missed announcements: rebuild everything.
    subscriber.on('ready', () => {
      void subscriber.subscribe(channel).catch(() => undefined);
      void this.refreshAll();
    });
    await subscriber.subscribe(channel);
    this.timer = setInterval(() => void this.refreshAll(), this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * The catalog of the published agent at `/mcp/v1/{workspace}/{slug}`, or
   * undefined when the address names no published agent (malformed,
   * unknown workspace or slug, draft, disabled).
   */
  async resolve(workspace: string, slug: string): Promise<AgentCatalog | undefined> {
    if (!AGENT_SLUG_PATTERN.test(slug) || workspace === 'all' || !isValidWikiWorkspace(workspace)) return undefined;
    const path = pathKey(workspace, slug);
    const cached = this.byPath.get(path);
    if (cached !== undefined) return cached;
    // Unauthenticated requests reach here (404 comes before the credential): remember misses briefly.
    if ((this.missing.get(path) ?? 0) > Date.now()) return undefined;
    const loaded = await this.load(path);
    if (loaded === undefined) {
      if (this.missing.size >= MISSING_MAX) this.missing.clear();
      this.missing.set(path, Date.now() + MISSING_TTL_MS);
    }
    return loaded;
  }

  /** The cached catalog of an agent by its id (the agent principal's), if this replica holds it. */
  byAgentId(agentId: string): AgentCatalog | undefined {
    const path = this.pathById.get(agentId);
    return path === undefined ? undefined : this.byPath.get(path);
  }

  /** Announces a change of the agent at `workspace/slug` to every replica, this one included. */
  async announce(workspace: string, slug: string): Promise<void> {
    const path = pathKey(workspace, slug);
    this.missing.delete(path);
    await this.reload(path);
    await this.options.publisher.publish(this.options.channel, path);
  }

  /** Number of cached catalogs (tests, metrics). */
  get size(): number {
    return this.byPath.size;
  }

  private async refreshAll(): Promise<void> {
    await Promise.all([...this.byPath.keys()].map((path) => this.reload(path)));
  }

  /**
   * Rebuilds now every cached catalog whose agent `matches` (e.g. those binding extension
   * tools, when the served extension tools changed); a changed tool list calls `onToolsChanged`.
   */
  async refreshWhere(matches: (agent: AgentWithTools) => boolean): Promise<void> {
    const paths = [...this.byPath].filter(([, c]) => matches(c.agent)).map(([path]) => path);
    await Promise.all(paths.map((path) => this.reload(path)));
  }

  /** Rebuilds a cached address (an uncached one is left to its next request). */
  private async reload(path: string): Promise<void> {
    const before = this.byPath.get(path);
    if (before === undefined) return;
    const after = await this.load(path).catch((err: unknown) => {
      this.options.logger.warn({ err, agent: path }, 'agent catalog refresh failed; serving the previous one');
      return before;
    });
    if (after !== undefined && after.fingerprint !== before.fingerprint) {
      await this.options
        .onToolsChanged(after, before)
        .catch((err: unknown) =>
          this.options.logger.warn({ err, agent: path }, 'tools/list_changed notification failed'),
        );
    }
  }

  /** Loads and builds one address, one load at a time per address; caches it when published. */
  private load(path: string): Promise<AgentCatalog | undefined> {
    const pending = this.loading.get(path);
    if (pending !== undefined) return pending;
    const promise = this.fetch(path).finally(() => this.loading.delete(path));
    this.loading.set(path, promise);
    return promise;
  }

  private async fetch(path: string): Promise<AgentCatalog | undefined> {
    const slash = path.indexOf('/');
    const ref = { workspace: path.slice(0, slash), slug: path.slice(slash + 1) };
    let agent: AgentWithTools;
    try {
      agent = await this.options.bus.call('agent', agentOps, 'agent.get', ref, { principal: SYSTEM_PRINCIPAL });
    } catch (err) {
      if (!(err instanceof DaguError && err.code === 'resource_not_found')) throw err;
      this.forget(path);
      return undefined;
    }
    if (agent.state !== 'published') {
      this.forget(path);
      return undefined;
    }
    const tools = await this.options.build(agent);
    const definitions = [...tools.values()].map((t) => t.definition);
    const fingerprint = createHash('sha256').update(JSON.stringify(definitions)).digest('hex');
    const catalog: AgentCatalog = { agent, tools, definitions, fingerprint };
    const old = this.byPath.get(path);
    if (old !== undefined && old.agent.id !== agent.id) this.pathById.delete(old.agent.id);
    this.byPath.set(path, catalog);
    this.pathById.set(agent.id, path);
    return catalog;
  }

  private forget(path: string): void {
    const old = this.byPath.get(path);
    if (old !== undefined) this.pathById.delete(old.agent.id);
    this.byPath.delete(path);
  }
}
