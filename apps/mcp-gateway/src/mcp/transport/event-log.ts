import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { isResponse, type OutgoingMessage } from './protocol';
import { STANDALONE_STREAM, type McpKeys } from './redis-keys';
import { evalScript } from '@dagu-mcp/bus';

/**
 * Server→client messages kept in Redis Streams so that any replica can serve
 * an SSE stream and a client can resume it with `Last-Event-ID`
 * (Streamable HTTP §Resumability and Redelivery).
 *
 * - The standalone stream of a session (tag `s`) feeds GET streams. Each
 *   entry is *claimed* by exactly one open GET stream (a per-session cursor
 *   advanced atomically), so a message goes to one stream even when the
 *   client holds several; entries written while no stream is open wait for
 *   the next one.
 * - A POST answered as SSE gets its own stream (tag `r<16 hex>`); its last
 *   entry is the response, or an end marker when the request was cancelled.
 *
 * The SSE event id is `<tag>_<entry id>`, e.g. `s_1719000000000-0`. Streams are
 * capped at about `maxLen` entries and expire `retentionMs` after their last
 * write (the bounded resumption window).
 */
export interface LoggedEvent {
  /** SSE event id `<tag>_<entry id>`. */
  readonly eventId: string;
  /** Redis stream entry id. */
  readonly entryId: string;
  /** The message; `undefined` for the end marker of a POST stream. */
  readonly message: OutgoingMessage | undefined;
}

/** Options of {@link EventLog}. */
export interface EventLogOptions {
  /** How long a stream is kept after its last write, ms. */
  readonly retentionMs: number;
  /** Approximate cap on entries per stream (`XADD MAXLEN ~`). */
  readonly maxLen: number;
  /** TTL of the session's set of POST streams, ms (≥ the session idle TTL). */
  readonly indexTtlMs: number;
}

const Entries = z.array(z.tuple([z.string(), z.array(z.string())]));

// Hands the entries after the session cursor to one caller and moves the cursor past them.
const CLAIM = `
local cur = redis.call('GET', KEYS[2]) or '0-0'
local entries = redis.call('XRANGE', KEYS[1], '(' .. cur, '+', 'COUNT', ARGV[1])
if #entries > 0 then redis.call('SET', KEYS[2], entries[#entries][1], 'PX', ARGV[2]) end
return entries`;

// Moves the cursor forward to ARGV[1] (never backwards).
const ADVANCE = `
local function after(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)')
  local bm, bs = string.match(b, '(%d+)-(%d+)')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
local cur = redis.call('GET', KEYS[1])
if (not cur) or after(ARGV[1], cur) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

// Settles an orphaned POST stream once: marks its owner record settled and appends the answer.
const SETTLE = `
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[2], 'settled', '1') == 0 then return 0 end
redis.call('XADD', KEYS[1], '*', 'm', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', KEYS[3], '1')
return 1`;

/** Who serves a POST answered as SSE (the owner record, `<p>:mcp:{sid}:req:<stream>:owner`). */
export interface StreamOwner {
  /** The serving replica's id (replica-hub.ts). */
  readonly replica: string;
  /** The JSON-RPC request id. */
  readonly id: string | number;
  readonly method: string;
  /** The HTTP request id the logs carry (`details.requestId`). */
  readonly requestId: string;
  /** The DAG-run the request started, once known. */
  readonly dagRunId?: string;
}

const OwnerSchema = z.object({
  replica: z.string(),
  id: z.string(),
  method: z.string(),
  requestId: z.string(),
  dagRunId: z.string().optional(),
  settled: z.string().optional(),
});

/** A new POST stream tag: `r` + 16 hex characters. */
export function newRequestStreamTag(): string {
  return `r${randomBytes(8).toString('hex')}`;
}

/** Splits an SSE event id into stream tag and entry id; `undefined` when it is not one of ours. */
export function parseEventId(eventId: string): { stream: string; entryId: string } | undefined {
  const match = /^(s|r[0-9a-f]{16})_(\d{1,20}-\d{1,20})$/.exec(eventId.trim());
  if (match === null || match[1] === undefined || match[2] === undefined) return undefined;
  return { stream: match[1], entryId: match[2] };
}

/** Reads and writes the SSE event streams of sessions. */
export class EventLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: McpKeys,
    private readonly options: EventLogOptions,
  ) {}

  /**
   * Appends to a stream and wakes its readers: a message, the `end` marker
   * (a POST stream closed without a response) or the `begin` marker (the
   * anchor of a POST stream's priming event id; never delivered).
   */
  async append(sid: string, stream: string, message: OutgoingMessage | 'end' | 'begin'): Promise<LoggedEvent> {
    const key = this.keys.events(sid, stream);
    const [field, value] =
      message === 'end' ? ['e', '1'] : message === 'begin' ? ['b', '1'] : ['m', JSON.stringify(message)];
    const multi = this.redis.multi().xadd(key, 'MAXLEN', '~', String(this.options.maxLen), '*', field, value);
    multi.pexpire(key, this.options.retentionMs);
    if (stream !== STANDALONE_STREAM)
      multi.sadd(this.keys.requestStreams(sid), stream).pexpire(this.keys.requestStreams(sid), this.options.indexTtlMs);
    multi.publish(this.keys.wake(sid, stream), '1');
    const results = (await multi.exec()) ?? [];
    const entryId = results[0]?.[1];
    if (typeof entryId !== 'string') throw new Error('XADD returned no entry id');
    return { eventId: `${stream}_${entryId}`, entryId, message: typeof message === 'string' ? undefined : message };
  }

  /** Writes the owner record of POST stream `stream` (kept as long as the stream). */
  async recordOwner(sid: string, stream: string, owner: StreamOwner): Promise<void> {
    const key = this.keys.owner(sid, stream);
    const fields: Record<string, string> = {
      replica: owner.replica,
      id: JSON.stringify(owner.id),
      method: owner.method,
      requestId: owner.requestId,
      ...(owner.dagRunId !== undefined ? { dagRunId: owner.dagRunId } : {}),
    };
    await this.redis.multi().hset(key, fields).pexpire(key, this.options.retentionMs).exec();
  }

  /** Adds the DAG-run a request started to its owner record (reported when the request is orphaned). */
  async noteDagRun(sid: string, stream: string, dagRunId: string): Promise<void> {
    await this.redis.hset(this.keys.owner(sid, stream), 'dagRunId', dagRunId);
  }

  /** The owner record of POST stream `stream`, or `undefined` (none, or already settled by a resumer). */
  async owner(sid: string, stream: string): Promise<StreamOwner | undefined> {
    const parsed = OwnerSchema.safeParse(await this.redis.hgetall(this.keys.owner(sid, stream)));
    if (!parsed.success || parsed.data.settled !== undefined) return undefined;
    let id: unknown;
    try {
      id = JSON.parse(parsed.data.id);
    } catch {
      return undefined;
    }
    if (typeof id !== 'string' && typeof id !== 'number') return undefined;
    const { replica, method, requestId, dagRunId } = parsed.data;
    return { replica, id, method, requestId, ...(dagRunId !== undefined ? { dagRunId } : {}) };
  }

  /**
   * Appends `response` to an orphaned POST stream, once over all replicas
   * (the owner record is marked settled in the same script). False when
   * another resumer settled it first or the record is gone.
   */
  async settleOrphan(sid: string, stream: string, response: OutgoingMessage): Promise<boolean> {
    const settled: unknown = await evalScript(
      this.redis,
      SETTLE,
      3,
      this.keys.events(sid, stream),
      this.keys.owner(sid, stream),
      this.keys.wake(sid, stream),
      JSON.stringify(response),
      String(this.options.retentionMs),
    );
    return settled === 1;
  }

  /** Entries of `stream` after `entryId` (exclusive), oldest first, at most `count`. */
  async after(sid: string, stream: string, entryId: string, count = 200): Promise<LoggedEvent[]> {
    const raw: unknown = await this.redis.xrange(this.keys.events(sid, stream), `(${entryId}`, '+', 'COUNT', count);
    return toEvents(stream, raw);
  }

  /** Claims the standalone entries no GET stream has taken yet (at most `count`). */
  async claim(sid: string, count = 200): Promise<LoggedEvent[]> {
    const raw: unknown = await evalScript(
      this.redis,
      CLAIM,
      2,
      this.keys.events(sid, STANDALONE_STREAM),
      this.keys.cursor(sid),
      String(count),
      String(this.options.retentionMs),
    );
    return toEvents(STANDALONE_STREAM, raw);
  }

  /** Marks standalone entries up to `entryId` as delivered (after a replay), so they are not claimed again. */
  async advanceCursor(sid: string, entryId: string): Promise<void> {
    await evalScript(this.redis, ADVANCE, 1, this.keys.cursor(sid), entryId, String(this.options.retentionMs));
  }

  /** The newest entry of `stream` (markers included, as `message: undefined`), or `undefined` when it has none. */
  async last(sid: string, stream: string): Promise<{ entryId: string; terminal: boolean } | undefined> {
    const raw: unknown = await this.redis.xrevrange(this.keys.events(sid, stream), '+', '-', 'COUNT', 1);
    const parsed = Entries.safeParse(raw);
    const entry = parsed.success ? parsed.data[0] : undefined;
    if (entry === undefined) return undefined;
    const [entryId, fields] = entry;
    if (fields[0] === 'e') return { entryId, terminal: true };
    const message = fields[0] === 'm' ? decode(fields[1] ?? '') : undefined;
    return { entryId, terminal: message !== undefined && isResponse(message) };
  }

  /** True when `stream` of `sid` exists (it has entries inside the retention window). */
  async exists(sid: string, stream: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.events(sid, stream))) === 1;
  }
}

function toEvents(stream: string, raw: unknown): LoggedEvent[] {
  const parsed = Entries.safeParse(raw);
  if (!parsed.success) return [];
  const events: LoggedEvent[] = [];
  for (const [entryId, fields] of parsed.data) {
    const eventId = `${stream}_${entryId}`;
    if (fields[0] === 'b') continue;
    if (fields[0] === 'e') {
      events.push({ eventId, entryId, message: undefined });
      continue;
    }
    const message = fields[0] === 'm' ? decode(fields[1] ?? '') : undefined;
    if (message !== undefined) events.push({ eventId, entryId, message });
  }
  return events;
}

function decode(text: string): OutgoingMessage | undefined {
  try {
    const parsed = OutgoingSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Loose shape check of a logged message (we wrote it ourselves; the check keeps the types honest). */
const OutgoingSchema = z.custom<OutgoingMessage>(
  (value) => typeof value === 'object' && value !== null && 'jsonrpc' in value && value.jsonrpc === '2.0',
);
