import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { parseDaguUri } from '@dagu-mcp/contracts';
import { subscriptionMeta } from './modern-protocol';
import type { OutgoingMessage } from './protocol';

/** The filter of one `subscriptions/listen` (mcp-revisions §2 "Change notifications"). */
export interface SubscriptionFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
}

/** One open listen stream on this replica. */
interface Listener {
  readonly id: RequestId;
  readonly uris: ReadonlySet<string>;
  readonly toolsListChanged: boolean;
  readonly send: (message: OutgoingMessage) => void;
}

/**
 * The part of a requested filter the gateway honours: run URIs
 * (`dagu://runs/{name}/{dagRunId}`) and their `/logs`, as `resources/subscribe`
 * offers them (dagu-model §8), and `toolsListChanged` when `toolChanges` says
 * tool-list changes are fed to the listeners (the extension tools of `/mcp`). The prompt and resource list flags are not honoured: those lists
 * do not change while the gateway runs, so a client is told not to expect them.
 */
export function honouredFilter(requested: SubscriptionFilter, toolChanges = false): SubscriptionFilter {
  const uris = (requested.resourceSubscriptions ?? []).filter(isRunUri);
  return {
    ...(toolChanges && requested.toolsListChanged === true ? { toolsListChanged: true } : {}),
    ...(uris.length === 0 ? {} : { resourceSubscriptions: [...new Set(uris)] }),
  };
}

function isRunUri(uri: string): boolean {
  try {
    const kind = parseDaguUri(uri).kind;
    return kind === 'run' || kind === 'run_logs';
  } catch {
    return false;
  }
}

/**
 * The `subscriptions/listen` streams open on this replica. Every replica
 * hears every run event over Redis (run-events.ts), so each delivers the
 * events to its own listeners: a listen request is served by whichever
 * replica it reached, and no event needs a cross-replica hop.
 */
export class ListenRegistry {
  private readonly listeners = new Set<Listener>();
  private toolChanges = false;

  /** Says tool-list changes will be fed ({@link toolsListChanged}), so listen filters may ask for them. */
  feedToolListChanges(): void {
    this.toolChanges = true;
  }

  /** The part of `requested` this registry honours ({@link honouredFilter}). */
  filterFor(requested: SubscriptionFilter): SubscriptionFilter {
    return honouredFilter(requested, this.toolChanges);
  }

  /** Registers a listener; returns the function that removes it. */
  add(id: RequestId, filter: SubscriptionFilter, send: (message: OutgoingMessage) => void): () => void {
    const listener: Listener = {
      id,
      uris: new Set(filter.resourceSubscriptions ?? []),
      toolsListChanged: filter.toolsListChanged === true,
      send,
    };
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /**
   * Sends `notifications/tools/list_changed` to every local listener that asked
   * for it, tagged with its subscription id. Returns how many it went to.
   */
  toolsListChanged(): number {
    let count = 0;
    for (const listener of this.listeners) {
      if (!listener.toolsListChanged) continue;
      listener.send({
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: subscriptionMeta(listener.id) },
      });
      count += 1;
    }
    return count;
  }

  /**
   * Sends `notifications/resources/updated {uri}` to every local listener whose
   * filter names `uri` (exact string), tagged with its subscription id.
   * Returns how many listeners it went to.
   */
  resourceUpdated(uri: string): number {
    let count = 0;
    for (const listener of this.listeners) {
      if (!listener.uris.has(uri)) continue;
      listener.send({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri, _meta: subscriptionMeta(listener.id) },
      });
      count += 1;
    }
    return count;
  }

  /** Open listeners here (leak checks). */
  get size(): number {
    return this.listeners.size;
  }
}
