import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { ClientCapabilitiesSchema, LoggingLevelSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { isSupportedVersion } from './protocol';
import type { McpKeys } from './redis-keys';
import { evalScript } from '@dagu-mcp/bus';
import { DaguError } from '@dagu-mcp/contracts';
import { SessionCache } from './session-cache';
import type { SessionRecord } from './session-record';

export type { SessionRecord } from './session-record';

/** A fresh session id: 32 random bytes as 64 lower-case hex characters (visible ASCII, Streamable HTTP §Session Management). */
export function newSessionId(): string {
  return randomBytes(32).toString('hex');
}

/** True for ids {@link newSessionId} can produce; anything else is unknown without asking Redis. */
export function isWellFormedSessionId(id: string): boolean {
  return /^[0-9a-f]{64}$/.test(id);
}

// Refreshes the TTL of a live session's keys and of the subscriber index of every URI
// it subscribed to (KEYS[2] holds them; ARGV[3] is the index-key prefix), so no index
// key outlives the sessions in it. The index keys are derived from the set, not
// declared: as in SUBSCRIBE_BOUNDED they live outside the session's slot.
const TOUCH_SUBSCRIBERS = `
for _, uri in ipairs(redis.call('SMEMBERS', KEYS[2])) do redis.call('PEXPIRE', ARGV[3] .. uri, ARGV[1]) end`;

// Refreshes the TTL of a live session's keys and returns its record, in one round
// trip — only for the principal it is bound to (another principal touches nothing).
const LOAD_AND_TOUCH = `
if redis.call('HGET', KEYS[1], 'p') ~= ARGV[2] then return false end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
${TOUCH_SUBSCRIBERS}
return redis.call('HGETALL', KEYS[1])`;

// The TTL refresh of LOAD_AND_TOUCH without the load (sessions with open streams).
const TOUCH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
${TOUCH_SUBSCRIBERS}
return 1`;

const FlatHash = z.array(z.string());

// Adds a subscription unless the session already holds `max` others; 1 added or present, 0 refused.
const SUBSCRIBE_BOUNDED = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then
  if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
  redis.call('SADD', KEYS[1], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`;

// Admits a new session of a principal unless it already has `max` live ones, and writes its
// record in the same script: the ended or expired ones are pruned only at the bound
// (so opening a session stays O(1) below it), and a session admitted but not yet written would
// look ended to that prune, letting concurrent initializes past the bound (5,678 of
// 10,000 against 5,000). The record's key is derived, not declared: like the pruned ones it
// lives in the session's slot, not the principal's. ARGV: sid, max, now, ttl, session-key
// prefix, session-key suffix, then the record's field/value pairs. 1 admitted, 0 refused.
const ADMIT_SESSION = `
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  for _, sid in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if redis.call('EXISTS', ARGV[5] .. sid .. ARGV[6]) == 0 then redis.call('ZREM', KEYS[1], sid) end
  end
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local record = ARGV[5] .. ARGV[1] .. ARGV[6]
redis.call('HSET', record, unpack(ARGV, 7))
redis.call('PEXPIRE', record, ARGV[4])
return 1`;

/** Default of the live sessions one principal may hold (`MCP_SESSIONS_PER_PRINCIPAL_MAX`). */
export const DEFAULT_SESSIONS_PER_PRINCIPAL_MAX = 5000;

/** Default of the subscriptions one session may hold (`MCP_SUBSCRIPTIONS_MAX`). */
export const DEFAULT_SUBSCRIPTIONS_MAX = 100;

/**
 * Session records in Redis with an idle TTL: every load refreshes it, so a
 * session expires `idleTtlMs` after its last use and Redis frees its keys.
 * Loads are memoized per replica for `cacheMs` (see {@link SessionCache});
 * changes are announced through `announceChange` (the replica hub), whose
 * listeners on every replica call {@link SessionStore.forget}.
 */
export class SessionStore {
  private readonly cache: SessionCache;

  /**
   * @param idleTtlMs - idle time after which Redis drops a session, ms.
   * @param cacheMs - how long a loaded record is reused without Redis, ms
   *   (`SESSION_CACHE_MS`, default 0 = off); capped at a quarter of `idleTtlMs`.
   * @param announceChange - tells the other replicas that a session's record
   *   changed (the replica hub's `announceSessionChange`); default: nobody.
   * @param maxSubscriptions - most resource subscriptions one session holds
   *   (`MCP_SUBSCRIPTIONS_MAX`).
   * @param maxSessionsPerPrincipal - most live sessions of one principal
   *   (`MCP_SESSIONS_PER_PRINCIPAL_MAX`).
   */
  constructor(
    private readonly redis: Redis,
    private readonly keys: McpKeys,
    readonly idleTtlMs: number,
    cacheMs = 0,
    private readonly announceChange: (id: string) => Promise<void> = async () => undefined,
    private readonly maxSubscriptions = DEFAULT_SUBSCRIPTIONS_MAX,
    private readonly maxSessionsPerPrincipal = DEFAULT_SESSIONS_PER_PRINCIPAL_MAX,
  ) {
    this.cache = new SessionCache(Math.min(cacheMs, Math.floor(idleTtlMs / 4)));
  }

  /**
   * Stores a new record with the idle TTL, unless its principal already holds
   * `maxSessionsPerPrincipal` live sessions.
   *
   * @returns false (nothing stored) when the principal is at its bound.
   */
  async create(record: SessionRecord): Promise<boolean> {
    const key = this.keys.session(record.id);
    const [before, after] = key.split(record.id);
    const admitted = await evalScript(
      this.redis,
      ADMIT_SESSION,
      1,
      this.keys.principalSessions(record.principalId),
      record.id,
      this.maxSessionsPerPrincipal,
      record.createdAt,
      this.idleTtlMs,
      before ?? '',
      after ?? '',
      ...['v', record.protocolVersion, 'p', record.principalId],
      ...['ci', JSON.stringify(record.clientInfo ?? null), 'cc', JSON.stringify(record.clientCapabilities)],
      ...['at', String(record.createdAt)],
    );
    if (admitted !== 1) return false;
    return true;
  }

  /**
   * The live record of session `id` bound to `principalId`, its TTL
   * refreshed; `undefined` when unknown, ended, expired, unreadable or bound
   * to another principal (all answered 404 alike).
   */
  async load(id: string, principalId: string): Promise<SessionRecord | undefined> {
    if (!isWellFormedSessionId(id)) return undefined;
    const cached = this.cache.get(id, principalId);
    if (cached !== undefined) return cached;
    const epoch = this.cache.epoch;
    const keys = [this.keys.session(id), this.keys.subscriptions(id), this.keys.requestStreams(id)];
    const raw: unknown = await evalScript(
      this.redis,
      LOAD_AND_TOUCH,
      keys.length,
      ...keys,
      String(this.idleTtlMs),
      principalId,
      this.keys.subscribers(''),
    );
    const flat = FlatHash.safeParse(raw);
    if (!flat.success || flat.data.length === 0) return undefined;
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < flat.data.length; i += 2) fields.set(flat.data[i] ?? '', flat.data[i + 1] ?? '');
    const record = parseRecord(id, fields);
    if (record !== undefined) this.cache.set(record, epoch);
    return record;
  }

  /** Drops this replica's memo of session `id` (it ended or changed, here or on another replica). */
  forget(id: string): void {
    this.cache.forget(id);
  }

  /** Whom session `id` is bound to (`SessionRecord.principalId`), or undefined when it is gone; reads only. */
  async ownerOf(id: string): Promise<string | undefined> {
    if (!isWellFormedSessionId(id)) return undefined;
    return (await this.redis.hget(this.keys.session(id), 'p')) ?? undefined;
  }

  /** True when session `id` exists and is bound to `principalId`; reads only (no TTL refresh). */
  async isLive(id: string, principalId: string): Promise<boolean> {
    if (!isWellFormedSessionId(id)) return false;
    return (await this.redis.hget(this.keys.session(id), 'p')) === principalId;
  }

  /**
   * Refreshes the idle TTL of sessions with open streams, and of the
   * subscriber index of their URIs (no-op for gone ones).
   */
  async touch(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const ttl = String(this.idleTtlMs);
    const index = this.keys.subscribers('');
    await Promise.all(
      ids.map((id) =>
        evalScript(
          this.redis,
          TOUCH,
          3,
          this.keys.session(id),
          this.keys.subscriptions(id),
          this.keys.requestStreams(id),
          ttl,
          '',
          index,
        ),
      ),
    );
  }

  /** Which of `ids` still exist (same order). */
  async exists(ids: readonly string[]): Promise<boolean[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(this.keys.session(id));
    const results = (await pipeline.exec()) ?? [];
    // A failed EXISTS (Redis went away mid-pipeline) is no answer: taken as "gone", it would end
    // every live session's requests on this replica (-32800) during a Redis blip.
    const failed = results.find(([error]) => error !== null)?.[0];
    if (failed !== undefined && failed !== null) throw failed;
    return ids.map((_, i) => results[i]?.[1] === 1);
  }

  /** Stores the session's `logging/setLevel` level and tells every replica to reload the record. */
  async setLogLevel(id: string, level: LoggingLevel): Promise<void> {
    await this.redis.hset(this.keys.session(id), 'll', level);
    this.cache.forget(id);
    await this.announceChange(id);
  }

  /**
   * Adds `uri` to the session's subscriptions (a set that expires with the
   * session) and the session to the URI's subscriber set. Subscribing again
   * to a URI already held is accepted.
   *
   * @throws DaguError `invalid_request` on `uri` when the session already
   *   holds `maxSubscriptions` other subscriptions.
   */
  async subscribe(id: string, uri: string): Promise<void> {
    const added = await evalScript(
      this.redis,
      SUBSCRIBE_BOUNDED,
      2,
      this.keys.subscriptions(id),
      this.keys.subscribers(uri),
      uri,
      this.maxSubscriptions,
      this.idleTtlMs,
      id,
    );
    if (added !== 1) {
      throw new DaguError(
        'invalid_request',
        `A session holds at most ${this.maxSubscriptions} resource subscriptions; unsubscribe from one first.`,
        { field: 'uri', details: { limit: this.maxSubscriptions } },
      );
    }
  }

  async unsubscribe(id: string, uri: string): Promise<void> {
    await this.redis.multi().srem(this.keys.subscriptions(id), uri).srem(this.keys.subscribers(uri), id).exec();
  }

  /**
   * Whether any of `uris` has a subscriber entry (one `EXISTS` over their
   * subscriber sets, which Redis drops when they empty). An entry may belong
   * to an ended session: {@link subscribersOf} prunes those.
   */
  async anySubscribed(uris: readonly string[]): Promise<boolean> {
    if (uris.length === 0) return false;
    return (await this.redis.exists(...uris.map((uri) => this.keys.subscribers(uri)))) > 0;
  }

  /** Live sessions subscribed to `uri`; entries of ended or expired sessions are pruned on the way. */
  async subscribersOf(uri: string): Promise<string[]> {
    const ids = await this.redis.smembers(this.keys.subscribers(uri));
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.sismember(this.keys.subscriptions(id), uri);
    const results = (await pipeline.exec()) ?? [];
    const live = ids.filter((_, i) => results[i]?.[1] === 1);
    const stale = ids.filter((_, i) => results[i]?.[1] !== 1);
    if (stale.length > 0) await this.redis.srem(this.keys.subscribers(uri), ...stale);
    return live;
  }

  /**
   * Ends a session: deletes its record, subscriptions, standalone and POST
   * streams. Returns false when it did not exist.
   */
  async destroy(id: string): Promise<boolean> {
    this.cache.forget(id);
    const [uris, streams] = await Promise.all([
      this.redis.smembers(this.keys.subscriptions(id)),
      this.redis.smembers(this.keys.requestStreams(id)),
    ]);
    const multi = this.redis.multi().del(this.keys.session(id));
    multi.del(
      this.keys.subscriptions(id),
      this.keys.requestStreams(id),
      this.keys.events(id, 's'),
      this.keys.cursor(id),
    );
    for (const stream of streams) multi.del(this.keys.events(id, stream));
    for (const uri of uris) multi.srem(this.keys.subscribers(uri), id);
    const results = (await multi.exec()) ?? [];
    return results[0]?.[1] === 1;
  }
}

function parseRecord(id: string, fields: ReadonlyMap<string, string>): SessionRecord | undefined {
  const version = fields.get('v') ?? '';
  const principalId = fields.get('p');
  if (!isSupportedVersion(version) || principalId === undefined) return undefined;
  const capabilities = ClientCapabilitiesSchema.safeParse(parseJson(fields.get('cc')));
  const level = LoggingLevelSchema.safeParse(fields.get('ll'));
  return {
    id,
    protocolVersion: version,
    principalId,
    clientInfo: parseJson(fields.get('ci')),
    clientCapabilities: capabilities.success ? capabilities.data : {},
    logLevel: level.success ? level.data : undefined,
    createdAt: Number(fields.get('at') ?? 0),
  };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
