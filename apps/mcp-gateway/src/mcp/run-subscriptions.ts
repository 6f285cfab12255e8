import { formatDaguUri, LATEST_RUN_ID, type RunEvent } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';

/**
 * Run subscriptions (dagu-model §8): a session that sent
 * `resources/subscribe` for a run URI (`dagu://runs/{name}/{dagRunId}`) or its
 * `/logs` gets `notifications/resources/updated {uri}` when the run reaches a
 * terminal status (2, 3, 4, 6, 8) or the waiting checkpoint (7), and again
 * when a waiting run later ends.
 *
 * Every gateway replica hears every run event (run-service PUBLISHes them;
 * {@link RunEventDispatcher.listenAll}); exactly one replica relays each
 * event: the first to `SET NX` the event's key in Redis. The relay appends the
 * notification to each subscribed session's standalone stream
 * ({@link McpSessionManager.resourceUpdated}), which whichever replica holds
 * that stream delivers. Subscriptions match the URI string as subscribed;
 * the canonical forms above (no query) are the ones notified.
 *
 * Most runs have no subscriber: a replica first asks whether any of the
 * event's URIs has one (one Redis command) and claims nothing when none
 * has. Only a claimer notifies, so no session hears an event twice; a
 * subscription made while the replicas are asking is notified only if a
 * replica asks after it (as before, a subscription made after the relay's
 * set reads was not notified of that event either).
 */

/** Statuses that notify: terminal ones and `waiting` (dagu-model §1). */
const NOTIFYING = new Set([2, 3, 4, 6, 7, 8]);

/** What the relay is built from. */
export interface RunSubscriptionRelayDeps {
  /** Source of every root run's events. */
  readonly events: { listenAll(listener: (event: RunEvent) => void): () => void };
  /** Whether any session may be subscribed to one of `uris` (may say yes for ended sessions, never no for live ones). */
  readonly anySubscribed: (uris: readonly string[]) => Promise<boolean>;
  /** Claims an event once over all replicas: `true` for exactly one caller per key. */
  readonly claim: (key: string, ttlMs: number) => Promise<boolean>;
  /** Sends `notifications/resources/updated {uri}` to the sessions subscribed to `uri`. */
  readonly notify: (uri: string) => Promise<number>;
  readonly logger: Logger;
}

/** True for a run status whose event notifies subscribers (terminal, or waiting). */
export function notifiesSubscribers(status: number): boolean {
  return NOTIFYING.has(status);
}

/** How long an event's claim key lives: far longer than the skew between replicas hearing it. */
const CLAIM_TTL_MS = 10 * 60_000;

/**
 * The URIs a run event updates: the run and its logs, by its id and by
 * `latest` (the DAG's latest run; an event of an older run
 * only makes a `latest` subscriber read again).
 */
export function subscribedUrisOf(event: Pick<RunEvent, 'name' | 'dagRunId'>): string[] {
  return [event.dagRunId, LATEST_RUN_ID].flatMap((dagRunId) => {
    const address = { name: event.name, dagRunId };
    return [formatDaguUri({ kind: 'run', ...address }), formatDaguUri({ kind: 'run_logs', ...address })];
  });
}

/** The key that makes one replica relay an event (same event → same key on every replica). */
export function claimKeyOf(event: RunEvent): string {
  return ['run-notified', event.name, event.dagRunId, event.attemptId ?? '', String(event.status), event.at].join(':');
}

/** Relays run events to subscribed sessions; see the module comment. */
export class RunSubscriptionRelay {
  private remove: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: RunSubscriptionRelayDeps) {}

  /** Starts listening. */
  start(): void {
    this.remove ??= this.deps.events.listenAll((event) => {
      if (!NOTIFYING.has(event.status)) return;
      const job = this.relay(event).finally(() => this.inFlight.delete(job));
      this.inFlight.add(job);
    });
  }

  /** Stops listening; resolves when relays in flight are done. */
  async stop(): Promise<void> {
    this.remove?.();
    this.remove = undefined;
    await Promise.all([...this.inFlight]);
  }

  private async relay(event: RunEvent): Promise<void> {
    try {
      const uris = subscribedUrisOf(event);
      if (!(await this.deps.anySubscribed(uris))) return;
      if (!(await this.deps.claim(claimKeyOf(event), CLAIM_TTL_MS))) return;
      const counts = await Promise.all(uris.map((uri) => this.deps.notify(uri)));
      const sessions = counts.reduce((a, b) => a + b, 0);
      if (sessions > 0)
        this.deps.logger.debug(
          { dag: event.name, dagRunId: event.dagRunId, status: event.status, sessions },
          'run subscription notified',
        );
    } catch (err) {
      this.deps.logger.warn(
        { err: err instanceof Error ? err.message : String(err), dag: event.name, dagRunId: event.dagRunId },
        'run subscription relay failed',
      );
    }
  }
}
