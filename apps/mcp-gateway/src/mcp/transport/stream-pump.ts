import type { Logger } from '@dagu-mcp/runtime';
import type { LoggedEvent } from './event-log';
import type { ReplicaHub } from './replica-hub';
import type { SseStream } from './sse-stream';
import { sessionRef } from '../../http/request-log';

/** Options of {@link pumpEvents}. */
export interface PumpOptions {
  readonly sse: SseStream;
  readonly hub: ReplicaHub;
  readonly sid: string;
  /** Stream tag whose wake channel triggers a fetch (`s` or a POST stream tag). */
  readonly stream: string;
  /** Fallback fetch interval, ms: covers a wake lost while Redis reconnected. */
  readonly pollMs: number;
  /** The next batch of events to deliver (empty when there is none). */
  readonly fetch: () => Promise<LoggedEvent[]>;
  /** Writes one event; `stop` ends the stream after it (e.g. the response of a resumed POST). */
  readonly deliver: (event: LoggedEvent) => 'continue' | 'stop';
  /** Asked when a fetch came back empty; `stop` ends the stream (e.g. the resumed stream expired). */
  readonly idle?: () => Promise<'continue' | 'stop'>;
  readonly logger: Logger;
}

/**
 * Feeds an open SSE stream from Redis until it ends: subscribes to the
 * stream's wake channel first (so no entry slips between the first fetch and
 * the subscription), fetches, then fetches again on every wake and every
 * `pollMs`. Wakes that arrive while a fetch runs are coalesced into one more
 * round. Everything (wake subscription, poll timer) is released when the SSE
 * stream closes, whoever closes it. Resolves once the pump is running.
 */
export async function pumpEvents(options: PumpOptions): Promise<void> {
  const { sse, hub, logger } = options;
  let stopped = false;
  let running = false;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let unwatch: (() => void) | undefined;

  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (poll !== undefined) clearInterval(poll);
    unwatch?.();
    unwatch = undefined;
  };

  const round = async (): Promise<'continue' | 'stop'> => {
    for (;;) {
      const batch = await options.fetch();
      if (stopped) return 'stop';
      if (batch.length === 0) return options.idle === undefined ? 'continue' : options.idle();
      for (const event of batch) {
        if (stopped || options.deliver(event) === 'stop') return 'stop';
      }
    }
  };

  const drain = async (): Promise<void> => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        if ((await round()) === 'stop') {
          sse.end();
          return;
        }
      } while (again && !stopped);
    } catch (err) {
      logger.warn({ err, sessionRef: sessionRef(options.sid), stream: options.stream }, 'mcp stream fetch failed');
    } finally {
      running = false;
    }
  };

  sse.onClose(stop);
  const remove = await hub.watch(options.sid, options.stream, () => void drain());
  if (stopped) return remove();
  unwatch = remove;
  poll = setInterval(() => void drain(), options.pollMs);
  poll.unref();
  await drain();
}
