import type { Logger } from '@dagu-mcp/runtime';
import type { Outbound } from './call-context';
import type { EventLog, StreamOwner } from './event-log';
import type { OutgoingMessage } from './protocol';
import { STANDALONE_STREAM } from './redis-keys';
import type { SseStream } from './sse-stream';
import { sessionRef } from '../../http/request-log';

/**
 * Messages of a request answered as JSON: they go to the session's standalone
 * stream, which whatever replica holds the client's GET stream delivers.
 */
export function standaloneOutbound(events: EventLog, sid: string): Outbound {
  return {
    send: async (message) => {
      await events.append(sid, STANDALONE_STREAM, message);
    },
  };
}

/**
 * Messages of a POST answered as SSE: each is appended to the request's own
 * Redis stream (its entry id becomes the SSE event id) and, while the HTTP
 * stream is open, written to it. Once the stream is released (SEP-1699) or
 * the client went away, messages only go to Redis, where a GET with
 * `Last-Event-ID` picks them up on any replica. Writes keep their order.
 */
export class PostStreamOutbound implements Outbound {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventLog,
    private readonly sid: string,
    /** The POST stream tag (`r` + 16 hex). */
    readonly tag: string,
    private readonly sse: SseStream,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes the priming event (an id anchored in Redis, empty data, `retry`)
   * so the client can resume this stream (SEP-1699). Only for clients of
   * 2025-11-25 or later.
   */
  async prime(retryMs: number): Promise<void> {
    const anchor = await this.events.append(this.sid, this.tag, 'begin');
    this.sse.prime(anchor.eventId, retryMs);
  }

  send(message: OutgoingMessage): Promise<void> {
    this.chain = this.chain.then(() => this.write(message));
    return this.chain;
  }

  /** Closes the HTTP stream early; the request goes on and the client resumes with `Last-Event-ID`. */
  readonly release = (): void => {
    void this.chain.then(() => this.sse.end());
  };

  /**
   * Writes who serves this request (the owner record), so a replica resuming
   * the stream after this one died can answer it (orphan-check.ts).
   */
  async recordOwner(owner: Omit<StreamOwner, 'dagRunId'>): Promise<void> {
    await this.events.recordOwner(this.sid, this.tag, owner);
  }

  /** Notes the DAG-run this request started in its owner record (best effort: only an orphan's answer reads it). */
  readonly noteDagRun = (dagRunId: string): void => {
    void this.events.noteDagRun(this.sid, this.tag, dagRunId).catch(() => undefined);
  };

  /** Sends the response and ends the stream. */
  async finish(response: OutgoingMessage): Promise<void> {
    await this.send(response);
    this.sse.end();
  }

  /** Ends a stream whose request was cancelled: no response (cancellation §Behavior), an end marker for resumers. */
  async abandon(): Promise<void> {
    this.chain = this.chain.then(async () => {
      await this.events.append(this.sid, this.tag, 'end').catch(() => undefined);
    });
    await this.chain;
    this.sse.end();
  }

  private async write(message: OutgoingMessage): Promise<void> {
    try {
      const logged = await this.events.append(this.sid, this.tag, message);
      this.sse.send(message, logged.eventId);
    } catch (err) {
      // Redis is unavailable: still deliver on the open stream, without an id (not resumable).
      this.logger.warn({ err, sessionRef: sessionRef(this.sid) }, 'mcp event could not be logged');
      this.sse.send(message);
    }
  }
}
