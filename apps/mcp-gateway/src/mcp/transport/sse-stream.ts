import type { Response } from 'express';
import type { OutgoingMessage } from './protocol';

/** Options of {@link SseStream}. */
export interface SseStreamOptions {
  /** Interval of keep-alive comments, ms (spec 020: at most 30 s). */
  readonly keepAliveMs: number;
  /** Extra response headers, e.g. `Mcp-Session-Id`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One `text/event-stream` response (Streamable HTTP; spec 020 §Endpoint):
 * headers with `Cache-Control: no-cache` and `X-Accel-Buffering: no` (so a
 * proxy does not buffer), an SSE comment right after them, then a comment
 * every `keepAliveMs` until the stream ends or the client goes away.
 *
 * Wire format per event: `id: <event id>` (when given), `data: <JSON>`, blank
 * line. Comments are `: <text>` lines, ignored by clients.
 */
export class SseStream {
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  private readonly closeListeners = new Set<() => void>();

  constructor(
    private readonly res: Response,
    private readonly options: SseStreamOptions,
  ) {}

  /** Writes the status line, headers and the first comment; starts the keep-alive comments. */
  open(): void {
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream');
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    this.res.setHeader('Connection', 'keep-alive');
    this.res.setHeader('X-Accel-Buffering', 'no');
    for (const [name, value] of Object.entries(this.options.headers ?? {})) this.res.setHeader(name, value);
    this.res.flushHeaders();
    this.res.socket?.setNoDelay(true);
    this.res.socket?.setTimeout(0);
    this.write(': stream open\n\n');
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), this.options.keepAliveMs);
    this.timer.unref();
    this.res.once('close', () => this.finish());
  }

  /** True once the stream was ended by us or closed by the client. */
  get closed(): boolean {
    return this.ended || this.res.writableEnded || this.res.destroyed;
  }

  /**
   * The priming event of SEP-1699: an event id with empty data, and the
   * reconnection delay the client should use (`retry`, ms) after we close.
   */
  prime(eventId: string, retryMs: number): void {
    this.write(`id: ${eventId}\nretry: ${retryMs}\ndata: \n\n`);
  }

  /** Sends one message as an SSE `message` event. Returns false when the stream is closed. */
  send(message: OutgoingMessage, eventId?: string): boolean {
    if (this.closed) return false;
    const id = eventId === undefined ? '' : `id: ${eventId}\n`;
    this.write(`${id}event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return true;
  }

  /** Ends the response (the client may resume with `Last-Event-ID` when the stream was primed). */
  end(): void {
    if (!this.closed) this.res.end();
    this.finish();
  }

  /** Runs `listener` once the stream is over, whoever closed it. Runs at once when it already is. */
  onClose(listener: () => void): void {
    if (this.ended) return listener();
    this.closeListeners.add(listener);
  }

  private write(chunk: string): void {
    if (!this.closed) this.res.write(chunk);
  }

  private finish(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.ended) return;
    this.ended = true;
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const listener of listeners) listener();
  }
}
