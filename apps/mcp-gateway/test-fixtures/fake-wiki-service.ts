import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ServiceWorker, type HandlerMap } from '@dagu-mcp/bus';
import { DaguError, formatDaguUri, wikiOps, type Principal, type WikiPageMeta } from '@dagu-mcp/contracts';

/**
 * Test double of wiki-service on the real bus (BullMQ on the local Redis),
 * for the gateway's wiki tests: an in-memory page store that honours the
 * `wiki.*` contract closely enough to drive the REST routes and the read
 * backends, and records every call (op, payload, principal) it receives.
 */

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A recorded bus call as the service received it. */
export interface WikiCall {
  readonly op: string;
  readonly payload: unknown;
  readonly principal: Principal;
}

interface StoredPage {
  content: string;
  version: number;
  updatedBy: string;
}

const AT = '2026-01-01T00:00:00.000Z';

export class FakeWikiService {
  readonly prefix = `test-wiki-gw-${randomBytes(4).toString('hex')}`;
  readonly calls: WikiCall[] = [];
  readonly pages = new Map<string, StoredPage>();
  private readonly worker: ServiceWorker<typeof wikiOps>;

  constructor() {
    const handlers: HandlerMap<typeof wikiOps> = {
      ping: async () => ({ service: 'wiki-service', replica: 'fake', at: AT }),
      'wiki.list': async (p, ctx) => {
        this.record('wiki.list', p, ctx.principal);
        const items = [...this.pages.keys()]
          .filter((k) => p.workspace === undefined || p.workspace === 'all' || k.startsWith(`${p.workspace}/`))
          .sort();
        const entries = items.map((key) => ({ type: 'file' as const, ...this.meta(key) }));
        return {
          items: entries,
          pagination: { page: 1, perPage: 50, total: entries.length, totalPages: 1 },
          flat: true,
          sort: 'name' as const,
          order: 'asc' as const,
        };
      },
      'wiki.get': async (p, ctx) => {
        this.record('wiki.get', p, ctx.principal);
        const page = this.pages.get(`${p.workspace}/${p.path}`);
        if (page === undefined)
          throw new DaguError('resource_not_found', `Wiki page ${p.path} does not exist.`, { field: 'path' });
        return { ...this.meta(`${p.workspace}/${p.path}`), content: page.content, mimeType: 'text/markdown' as const };
      },
      'wiki.search': async (p, ctx) => {
        this.record('wiki.search', p, ctx.principal);
        return { results: [], hasMore: false };
      },
      'wiki.put': async (p, ctx) => {
        this.record('wiki.put', p, ctx.principal);
        const key = `${p.workspace}/${p.path}`;
        const current = this.pages.get(key);
        if (p.content.startsWith('---\n['))
          throw new DaguError('invalid_tool_input', 'The page frontmatter is not valid YAML.', { field: 'content' });
        if (p.expectedVersion !== undefined && p.expectedVersion !== (current?.version ?? 0)) {
          throw new DaguError('conflict', 'Version mismatch.', {
            field: 'expectedVersion',
            details: { currentVersion: current?.version ?? 0 },
          });
        }
        const changed = current?.content !== p.content;
        this.pages.set(key, {
          content: p.content,
          version: (current?.version ?? 0) + (changed ? 1 : 0),
          updatedBy: ctx.principal.subject,
        });
        return { page: this.meta(key), created: current === undefined, changed };
      },
      'wiki.delete': async (p, ctx) => {
        this.record('wiki.delete', p, ctx.principal);
        const key = `${p.workspace}/${p.path}`;
        const current = this.pages.get(key);
        if (current === undefined) throw new DaguError('resource_not_found', 'No such page.', { field: 'path' });
        this.pages.delete(key);
        return { workspace: p.workspace, path: p.path, version: current.version };
      },
      'wiki.rename': async (p, ctx) => {
        this.record('wiki.rename', p, ctx.principal);
        const current = this.pages.get(`${p.workspace}/${p.path}`);
        if (current === undefined) throw new DaguError('resource_not_found', 'No such page.', { field: 'path' });
        if (this.pages.has(`${p.workspace}/${p.newPath}`))
          throw new DaguError('conflict', 'Taken.', { field: 'newPath' });
        this.pages.delete(`${p.workspace}/${p.path}`);
        this.pages.set(`${p.workspace}/${p.newPath}`, { ...current, version: current.version + 1 });
        return { workspace: p.workspace, path: p.newPath, previousPath: p.path, version: current.version + 1 };
      },
      'wiki.check': async (p, ctx) => {
        this.record('wiki.check', p, ctx.principal);
        const exists = this.pages.has(`${p.workspace}/${p.path}`);
        if (p.kind !== 'upsert' && !exists)
          throw new DaguError('resource_not_found', 'No such page.', { field: 'path' });
        return { valid: true, errors: [], exists };
      },
    };
    this.worker = new ServiceWorker({
      service: 'wiki',
      catalog: wikiOps,
      handlers,
      redisUrl: REDIS_URL,
      prefix: this.prefix,
    });
  }

  async start(): Promise<void> {
    await this.worker.start();
  }

  /** Stops the worker and deletes the test's bus keys. */
  async close(): Promise<void> {
    await this.worker.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${this.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }

  /** The last call of `op`, or undefined. */
  last(op: string): WikiCall | undefined {
    return [...this.calls].reverse().find((call) => call.op === op);
  }

  private record(op: string, payload: unknown, principal: Principal): void {
    this.calls.push({ op, payload, principal });
  }

  private meta(key: string): WikiPageMeta {
    const slash = key.indexOf('/');
    const workspace = key.slice(0, slash);
    const path = key.slice(slash + 1);
    const page = this.pages.get(key);
    const name = path.slice(path.lastIndexOf('/') + 1);
    return {
      id: path,
      path,
      name,
      workspace,
      uri: formatDaguUri({ kind: 'wiki_page', workspace, path }),
      title: name,
      tags: [],
      size: Buffer.byteLength(page?.content ?? ''),
      version: page?.version ?? 1,
      updatedAt: AT,
      createdAt: AT,
      updatedBy: page?.updatedBy ?? '',
    };
  }
}
