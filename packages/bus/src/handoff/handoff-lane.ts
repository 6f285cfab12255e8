import { type JobJsonRaw } from 'bullmq';
import { type Redis } from 'ioredis';
import { describeError, type BusLogger } from '../bus-logger';
import { evalScript } from '../redis-script';
import { handoffKeysOf, handoffTokenOf } from './handoff-keys';

/**
 * The worker side of the bus's direct hand-off (the caller side is the insert
 * script in job-insert.ts).
 *
 * A worker advertises each free slot as one entry (its id) in the queue's
 * `idle` list and keeps an `alive` key holding its lock duration. The
 * caller's insert script pops a slot of a live worker, makes the job active
 * and locked for that worker exactly as BullMQ's `moveToActive` would, and
 * appends it to the worker's lane, on which the worker is blocked
 * (`BLMPOP`). So a request reaches a worker in one hop, against three on
 * BullMQ's own path (marker wake-up, then a `moveToActive` round trip). When
 * no slot is free the job is queued for BullMQ's Worker as usual.
 *
 * Slots are kept right by a reconciling refresh every `aliveTtlMs / 3`: it
 * renews `alive` and sets this worker's `idle` entries to its free slots less
 * the jobs already in its lane, so a lost slot return, a Redis restart (which
 * empties everything) or a stall long enough to be taken for dead all heal by
 * themselves. While a pop is between Redis and this process the refresh can
 * count its slot as free once; the next refresh takes it back.
 *
 * A worker that dies leaves its slots behind; callers drop them once its
 * `alive` key has expired (≤ `aliveTtlMs`). Jobs handed to it before that
 * (at most one per slot it had free) stay in its lane, never started; the
 * refresh of any live worker moves them back to `wait` for BullMQ's fetch
 * (within `aliveTtlMs` and a third). Jobs it was running are recovered by
 * BullMQ's stalled check when their lock expires, as any dead BullMQ
 * worker's.
 */

/** The lane entry that ends the blocking loop; real entries always hold a newline. */
const STOP_ENTRY = '';

/** How long one `BLMPOP` blocks, in s; also how long close waits for Redis before giving up on it. */
const BLOCK_SECONDS = 1;

/** Default `aliveTtlMs`. */
export const DEFAULT_ALIVE_TTL_MS = 1000;

/**
 * Renews `alive`, reconciles this worker's `idle` entries, and sweeps the
 * workers whose `alive` key expired: their slots are dropped and every job
 * still in their lane (never popped, so never started) goes back to `wait`
 * for BullMQ's fetch, as the stalled check would do after the lock expired,
 * but within a second instead of `lockDurationMs`. A job is moved only while
 * it is still `active` under the dead worker's lock or under none (its lock
 * expired first); a job another worker holds is left alone.
 * Swept jobs go where BullMQ would queue them: to `paused` while the queue is
 * paused, else to `wait`, with the marker unless the queue is paused or at
 * its global concurrency.
 * KEYS: idle, alive, lane, workers, wait, active, marker, events, meta, paused.
 * ARGV: worker id, lock ms, alive ttl ms, free slots, hand-off key base, job key prefix.
 * Returns the number of jobs requeued from dead workers' lanes.
 */
const REFRESH_LUA = `
local rcall = redis.call
rcall("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
rcall("SADD", KEYS[4], ARGV[1])
local want = tonumber(ARGV[4]) - rcall("LLEN", KEYS[3])
if want < 0 then want = 0 end
local have = #rcall("LPOS", KEYS[1], ARGV[1], "COUNT", 0)
if have < want then
  for _ = have + 1, want do rcall("RPUSH", KEYS[1], ARGV[1]) end
elseif have > want then
  rcall("LREM", KEYS[1], have - want, ARGV[1])
end
local requeued = 0
local meta = rcall("HMGET", KEYS[9], "paused", "concurrency")
local target = KEYS[5]
if meta[1] then target = KEYS[10] end
for _, worker in ipairs(rcall("SMEMBERS", KEYS[4])) do
  if rcall("EXISTS", ARGV[5] .. "alive:" .. worker) == 0 then
    rcall("LREM", KEYS[1], 0, worker)
    local lane = ARGV[5] .. "lane:" .. worker
    for _, entry in ipairs(rcall("LRANGE", lane, 0, -1)) do
      local id = string.match(entry, "^([^\\n]+)\\n")
      if id then
        local lockKey = ARGV[6] .. id .. ":lock"
        local holder = rcall("GET", lockKey)
        if (not holder or holder == worker .. ":" .. id) and rcall("LREM", KEYS[6], 1, id) == 1 then
          rcall("DEL", lockKey)
          rcall("RPUSH", target, id)
          rcall("XADD", KEYS[8], "*", "event", "waiting", "jobId", id, "prev", "active")
          requeued = requeued + 1
        end
      end
    end
    rcall("DEL", lane)
    rcall("SREM", KEYS[4], worker)
  end
end
if requeued > 0 and not meta[1] and not (meta[2] and rcall("LLEN", KEYS[6]) >= tonumber(meta[2])) then
  rcall("ZADD", KEYS[7], 0, "0")
end
return requeued
`;

/**
 * Withdraws the worker: no caller can hand it a job afterwards, and the
 * blocking loop sees the stop entry after every job handed before.
 * KEYS: idle, alive, lane, workers. ARGV: worker id, stop entry.
 */
const UNREGISTER_LUA = `
redis.call("DEL", KEYS[2])
redis.call("LREM", KEYS[1], 0, ARGV[1])
redis.call("SREM", KEYS[4], ARGV[1])
redis.call("RPUSH", KEYS[3], ARGV[2])
return 1
`;

/** A job handed to this worker: the lane entry's fields and the lock token it holds. */
export interface HandedOffJob {
  id: string;
  /** The job name (the op). */
  name: string;
  /** Epoch ms of the insert; also the job's `processedOn`. */
  timestamp: number;
  /** The job options as stored (JSON). */
  opts: string;
  /** The job data as stored (JSON of the `BusRequest`). */
  data: string;
  /** The lock token the insert script set (`handoffTokenOf`). */
  token: string;
}

/**
 * Parses a lane entry (`id \n name \n timestamp \n opts \n data`).
 *
 * @returns the job, or `undefined` when the entry is not one.
 */
export function parseLaneEntry(entry: string, workerId: string): HandedOffJob | undefined {
  const fields: string[] = [];
  let from = 0;
  for (let i = 0; i < 4; i += 1) {
    const at = entry.indexOf('\n', from);
    if (at < 0) return undefined;
    fields.push(entry.slice(from, at));
    from = at + 1;
  }
  const [id = '', name = '', timestamp = '', opts = ''] = fields;
  const stamp = Number(timestamp);
  if (id === '' || !Number.isFinite(stamp)) return undefined;
  return { id, name, timestamp: stamp, opts, data: entry.slice(from), token: handoffTokenOf(workerId, id) };
}

/**
 * The job hash of a handed-off job as the insert script left it (job-insert.ts),
 * for BullMQ's `Job.fromJSON`, so BullMQ's own `Job` methods (lock extension,
 * failure, completion) work on it without reading it back.
 */
export function rawJobOf(handed: HandedOffJob): JobJsonRaw {
  const stamp = String(handed.timestamp);
  const raw: Partial<JobJsonRaw> = {
    id: handed.id,
    name: handed.name,
    data: handed.data,
    opts: handed.opts,
    timestamp: stamp,
    processedOn: stamp,
    ats: '1',
    delay: '0',
    priority: '0',
  };
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- Job.fromJSON reads only these fields (README, "What it writes or relies on")
  return raw as JobJsonRaw;
}

/** Options of {@link HandoffLane}. */
export interface HandoffLaneOptions {
  /** BullMQ key prefix. */
  prefix: string;
  /** BullMQ queue name. */
  queueName: string;
  /** This worker's id, unique per process (the lock tokens start with it). */
  workerId: string;
  /** Slots: jobs handed to this worker at once. */
  concurrency: number;
  /** Lock duration, in ms, of the jobs handed to this worker. */
  lockDurationMs: number;
  /** How long `alive` lasts unrenewed, in ms; default 1000. A dead worker's slots are skipped after it. */
  aliveTtlMs?: number;
  /** The queue's BullMQ keys the dead-worker sweep writes (a BullMQ `Worker`'s `keys`). */
  queueKeys: { wait: string; active: string; marker: string; events: string; meta: string; paused: string };
  /** Connection for the scripts and slot returns (may be shared). */
  commands: Redis;
  /** A connection of its own, blocked in `BLMPOP` on the lane. */
  blocking: Redis;
  logger: BusLogger;
  /**
   * Runs a handed-off job to its end (reply, completion); must not reject.
   * Resolves true when it gave the job's slot back itself (with
   * {@link HandoffLane.slotOwner}), else the lane does.
   */
  run: (job: HandedOffJob) => Promise<boolean>;
}

/** See the module comment. */
export class HandoffLane {
  private readonly keys: {
    idle: string;
    alive: string;
    lane: string;
    workers: string;
    base: string;
    jobPrefix: string;
  };
  private readonly aliveTtlMs: number;
  private readonly running = new Set<Promise<void>>();
  /** Slots taken by handed-off jobs and not yet released. */
  private held = 0;
  private state: 'new' | 'running' | 'closing' | 'closed' = 'new';
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  /** Set when close gives up on Redis: the loop ends without waiting for the stop entry. */
  private abandoned = false;

  constructor(private readonly options: HandoffLaneOptions) {
    const keys = handoffKeysOf(options.prefix, options.queueName);
    this.keys = {
      idle: keys.idle,
      alive: keys.aliveOf(options.workerId),
      lane: keys.laneOf(options.workerId),
      workers: keys.workers,
      base: keys.base,
      jobPrefix: `${options.prefix}:${options.queueName}:`,
    };
    this.aliveTtlMs = options.aliveTtlMs ?? DEFAULT_ALIVE_TTL_MS;
  }

  /**
   * Releases the slot of a job that is ending, for a `run` that lists it as
   * free again itself, in the same Redis command as its completion (call it
   * right before sending that command, so the refresh counts it right).
   *
   * @returns the worker id to list in `idle`, or `undefined` once the lane is
   *   closing (its slots are withdrawn for good).
   */
  releaseSlot(): string | undefined {
    this.held -= 1;
    return this.state === 'running' ? this.options.workerId : undefined;
  }

  /**
   * Advertises the slots and starts taking jobs.
   *
   * @throws Error from Redis when the first registration fails.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('HandoffLane.start() may be called once.');
    this.state = 'running';
    await this.refreshNow();
    this.loopDone = this.loop();
    this.refreshTimer = setInterval(
      () => {
        this.refreshing ??= this.refreshNow()
          .catch((error: unknown) =>
            this.options.logger.debug({ error: describeError(error) }, 'bus hand-off refresh failed'),
          )
          .finally(() => (this.refreshing = undefined));
      },
      Math.max(50, Math.floor(this.aliveTtlMs / 3)),
    );
    this.refreshTimer.unref();
  }

  /**
   * Withdraws the slots, runs every job handed before that to its end, then
   * stops. While Redis does not answer it waits `BLOCK_SECONDS` for the
   * withdrawal, then disconnects the blocking connection (any job left in
   * the lane is swept back to `wait` by a live worker, or recovered by the
   * stalled check), and it waits for running jobs at most `lockDurationMs`
   * (their locks have expired by then anyway). Idempotent; the command
   * connection stays open (its owner closes it).
   */
  async close(): Promise<void> {
    if (this.state === 'new') this.state = 'closed';
    if (this.state !== 'running') return;
    this.state = 'closing';
    clearInterval(this.refreshTimer);
    const { idle, alive, lane, workers } = this.keys;
    const withdrawn = Promise.resolve(this.refreshing).then(() =>
      evalScript(
        this.options.commands,
        UNREGISTER_LUA,
        4,
        idle,
        alive,
        lane,
        workers,
        this.options.workerId,
        STOP_ENTRY,
      ),
    );
    try {
      await withTimeout(withdrawn, BLOCK_SECONDS * 1000, 'Redis did not answer');
    } catch (error) {
      this.options.logger.warn({ error: describeError(error) }, 'bus hand-off lane could not be withdrawn');
      this.abandoned = true;
      // Fails the pending BLMPOP at once, so the loop ends.
      this.options.blocking.disconnect(false);
    }
    await this.loopDone;
    await withTimeout(Promise.all(this.running), this.options.lockDurationMs, 'jobs still running').catch(
      (error: unknown) => {
        this.options.logger.warn(
          { error: describeError(error), running: this.running.size },
          'bus hand-off lane closed with jobs running',
        );
      },
    );
    this.state = 'closed';
  }

  private async refreshNow(): Promise<void> {
    if (this.state !== 'running') return;
    // No slots while the lane cannot be popped: jobs handed over then would wait for their lock to expire.
    const free = this.options.blocking.status === 'ready' ? Math.max(0, this.options.concurrency - this.held) : 0;
    const { idle, alive, lane, workers, base, jobPrefix } = this.keys;
    const { wait, active, marker, events, meta, paused } = this.options.queueKeys;
    const keys = [idle, alive, lane, workers, wait, active, marker, events, meta, paused];
    const args = [
      this.options.workerId,
      String(this.options.lockDurationMs),
      String(this.aliveTtlMs),
      String(free),
      base,
      jobPrefix,
    ];
    const requeued = await evalScript(this.options.commands, REFRESH_LUA, keys.length, ...keys, ...args);
    if (typeof requeued === 'number' && requeued > 0) {
      this.options.logger.warn({ requeued }, 'bus jobs handed to a dead worker were queued again');
    }
  }

  private async loop(): Promise<void> {
    const { blocking, concurrency, logger } = this.options;
    for (;;) {
      let popped: [string, string[]] | null;
      try {
        popped = await blocking.blmpop(BLOCK_SECONDS, 1, this.keys.lane, 'LEFT', 'COUNT', concurrency);
      } catch (error) {
        if (this.abandoned || blocking.status === 'end') return;
        logger.debug({ error: describeError(error) }, 'bus hand-off lane pop failed');
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      let stop = false;
      for (const entry of popped?.[1] ?? []) {
        if (entry === STOP_ENTRY) stop = true;
        else this.dispatch(entry);
      }
      if (stop || this.abandoned) return;
      // Let the jobs just dispatched run up to their first I/O wait before asking for more: a write
      // costs tens of µs here, and the reply of a quick handler should not queue behind this one.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private dispatch(entry: string): void {
    // Every entry took one of this worker's slots when it was handed over.
    this.held += 1;
    const job = parseLaneEntry(entry, this.options.workerId);
    if (job === undefined) {
      this.options.logger.error({ lane: this.keys.lane }, 'bus hand-off lane entry is malformed');
      this.returnSlot();
      return;
    }
    const run: Promise<void> = this.options.run(job).then(
      (released) => {
        this.running.delete(run);
        if (!released) this.returnSlot();
      },
      () => {
        this.running.delete(run);
        this.returnSlot();
      },
    );
    this.running.add(run);
  }

  /** Puts one slot back in `idle`; on failure the next refresh restores it. */
  private returnSlot(): void {
    this.held -= 1;
    if (this.state !== 'running') return;
    this.options.commands.rpush(this.keys.idle, this.options.workerId).catch((error: unknown) => {
      this.options.logger.debug({ error: describeError(error) }, 'bus hand-off slot could not be returned');
    });
  }
}

/** `promise`, or a rejection with `what` after `ms` (the promise itself goes on). */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms.`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
