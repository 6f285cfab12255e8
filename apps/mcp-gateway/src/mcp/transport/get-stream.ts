import type { Response } from 'express';
import type { Logger } from '@dagu-mcp/runtime';
import { parseEventId, type EventLog, type LoggedEvent } from './event-log';
import { createOrphanCheck } from './orphan-check';
import { isResponse } from './protocol';
import { STANDALONE_STREAM } from './redis-keys';
import type { ReplicaHub } from './replica-hub';
import { SseStream } from './sse-stream';
import { pumpEvents } from './stream-pump';

/** Most ms between two reads of a resumed POST stream (bounds how late an orphaned request is answered). */
const RESUMED_REQUEST_POLL_MS = 1_000;

/** What {@link openGetStream} needs. */
export interface GetStreamDeps {
  readonly events: EventLog;
  readonly hub: ReplicaHub;
  readonly logger: Logger;
  /** Keep-alive comment interval, ms (spec 020: ≤ 30 s). */
  readonly keepAliveMs: number;
  /** Fallback fetch interval of the pump, ms. */
  readonly pollMs: number;
}

/**
 * Serves `GET /mcp` (Streamable HTTP §Listening for Messages from the
 * Server, §Resumability), whichever replica the client reaches:
 *
 * - no or unreadable `Last-Event-ID`: the session's standalone stream; each
 *   message is claimed by exactly one open GET stream (event-log.ts);
 * - `Last-Event-ID: s_<entry>`: replays the standalone entries after it,
 *   marks them delivered, then goes on as above;
 * - `Last-Event-ID: r…_<entry>` (a POST stream): replays that request's
 *   messages after it and follows it until its response (or end marker),
 *   then ends. Answers 400 when that stream is no longer kept. When the
 *   replica serving that request died, this replica answers it with
 *   "outcome unknown" (orphan-check.ts); such streams are polled every
 *   second at most, so the answer comes within seconds of the owner's lease lapsing.
 *
 * The stream ends when the client leaves, the session ends (DELETE, expiry)
 * or, for a resumed POST stream, when the response was delivered.
 */
export async function openGetStream(
  deps: GetStreamDeps,
  res: Response,
  sid: string,
  lastEventId: string | undefined,
): Promise<'opened' | 'unknown-stream'> {
  const resume = lastEventId === undefined ? undefined : parseEventId(lastEventId);
  const requestStream = resume !== undefined && resume.stream !== STANDALONE_STREAM ? resume : undefined;
  if (requestStream !== undefined && !(await deps.events.exists(sid, requestStream.stream))) return 'unknown-stream';

  const sse = new SseStream(res, { keepAliveMs: deps.keepAliveMs, headers: { 'Mcp-Session-Id': sid } });
  sse.open();
  const removeCloser = deps.hub.onSessionEnd(sid, () => sse.end());
  sse.onClose(removeCloser);

  if (requestStream !== undefined) {
    let cursor = requestStream.entryId;
    const orphan = createOrphanCheck({ events: deps.events, hub: deps.hub, sid, stream: requestStream.stream });
    await pumpEvents({
      sse,
      hub: deps.hub,
      sid,
      stream: requestStream.stream,
      pollMs: Math.min(deps.pollMs, RESUMED_REQUEST_POLL_MS),
      logger: deps.logger,
      fetch: async () => deps.events.after(sid, requestStream.stream, cursor),
      deliver: (event) => {
        cursor = event.entryId;
        if (event.message === undefined) return 'stop';
        sse.send(event.message, event.eventId);
        return isResponse(event.message) ? 'stop' : 'continue';
      },
      // Nothing new: stop when the stream is gone, or complete and already delivered up to its end;
      // still open: answer it here when its owner died (the answer's wake brings it to this stream).
      idle: async () => {
        const last = await deps.events.last(sid, requestStream.stream);
        if (last === undefined || (last.terminal && last.entryId === cursor)) return 'stop';
        if (!last.terminal) await orphan.check();
        return 'continue';
      },
    });
    return 'opened';
  }

  // Standalone stream: first the replay after Last-Event-ID (if any), then claims.
  let replayFrom = resume?.entryId;
  const fetch = async (): Promise<LoggedEvent[]> => {
    if (replayFrom !== undefined) {
      const page = await deps.events.after(sid, STANDALONE_STREAM, replayFrom);
      const last = page.at(-1);
      if (last !== undefined) {
        replayFrom = last.entryId;
        return page;
      }
      await deps.events.advanceCursor(sid, replayFrom);
      replayFrom = undefined;
    }
    return deps.events.claim(sid);
  };
  await pumpEvents({
    sse,
    hub: deps.hub,
    sid,
    stream: STANDALONE_STREAM,
    pollMs: deps.pollMs,
    logger: deps.logger,
    fetch,
    deliver: (event) => {
      if (event.message !== undefined) sse.send(event.message, event.eventId);
      return 'continue';
    },
  });
  return 'opened';
}
