import { type BusRequest } from '@dagu-mcp/contracts';
import { type JobsOptions, type Queue } from 'bullmq';
import { type Redis } from 'ioredis';
import { evalScript } from '../redis-script';
import { bullKeysOf, handoffKeysOf } from './handoff-keys';

/**
 * The bus's job insertion: one small Lua script instead of `Queue.add`, which
 * also hands the job straight to an idle worker slot when there is one.
 *
 * Why not `Queue.add`: on the caller's critical path it costs ~25 µs of client
 * CPU (Job object, msgpack of the options, telemetry wrapper) and ~40 µs of
 * Redis time (its generic script handles parents, delays, priorities,
 * de-duplication, repeat). A bus request is always a plain, immediate,
 * un-prioritised job with a fresh id, so this script performs only the steps
 * `addStandardJob` performs for such a job, writing the same keys, fields and
 * events, so BullMQ's Worker, Queue getters, QueueEvents and stalled-job
 * recovery see a job indistinguishable from one `Queue.add` made.
 *
 * Direct hand-off (handoff-lane.ts): when the queue is neither paused nor
 * capped (global concurrency or rate limit) and a live worker has a free slot
 * in the `idle` list, the script
 * also does what BullMQ's `moveToActive` would do for that worker (job into
 * `active`, lock with the worker's token and lock duration, `active` event,
 * `processedOn`, `ats`) and appends the job to the worker's lane, which the
 * worker is blocked on. The job then reaches the worker in one hop instead of
 * three (marker wake-up, `moveToActive` round trip), and is from then on an
 * ordinary active BullMQ job: failed, retried, lock-extended and recovered
 * after a crash by BullMQ's own scripts, and completed by job-complete.ts,
 * which does what BullMQ's `moveToFinished` does for it. A slot whose
 * worker's `alive` key has expired (the worker died) is dropped and the next
 * one tried.
 * The parity of both paths is pinned by job-insert.integration.test.ts and
 * handoff.integration.test.ts; re-run them on a BullMQ upgrade.
 *
 * KEYS: wait, paused, meta, id, active, events, marker, idle, job hash.
 * ARGV: job id, name, data (JSON), opts (JSON), timestamp (epoch ms),
 *   hand-off key base (`handoffKeysOf().base`), lane time-to-live (ms).
 * Returns 2 (handed off), 1 (queued in wait or paused), or 0 when a job with
 * that id already exists (nothing changed).
 * Lane entry: `id \n name \n timestamp \n opts \n data` (only data may hold
 * a newline; JSON.stringify never writes a raw one anyway).
 */
const INSERT_JOB_LUA = `
local rcall = redis.call
local jobKey = KEYS[9]
if rcall("EXISTS", jobKey) == 1 then return 0 end
rcall("INCR", KEYS[4])
local maxEvents = rcall("HGET", KEYS[3], "opts.maxLenEvents")
if not maxEvents then
  maxEvents = 10000
  rcall("HSET", KEYS[3], "opts.maxLenEvents", maxEvents)
end
rcall("HMSET", jobKey, "name", ARGV[2], "data", ARGV[3], "opts", ARGV[4],
  "timestamp", ARGV[5], "delay", 0, "priority", 0)
rcall("XADD", KEYS[6], "*", "event", "added", "jobId", ARGV[1], "name", ARGV[2])
local meta = rcall("HMGET", KEYS[3], "paused", "concurrency", "max")
if not meta[1] and not meta[2] and not meta[3] then
  for _ = 1, 32 do
    local worker = rcall("LPOP", KEYS[8])
    if not worker then break end
    local lockMs = rcall("GET", ARGV[6] .. "alive:" .. worker)
    if lockMs then
      rcall("XADD", KEYS[6], "MAXLEN", "~", maxEvents, "*", "event", "waiting", "jobId", ARGV[1])
      rcall("LPUSH", KEYS[5], ARGV[1])
      rcall("SET", jobKey .. ":lock", worker .. ":" .. ARGV[1], "PX", lockMs)
      rcall("XADD", KEYS[6], "*", "event", "active", "jobId", ARGV[1], "prev", "waiting")
      rcall("HMSET", jobKey, "processedOn", ARGV[5])
      rcall("HINCRBY", jobKey, "ats", 1)
      local lane = ARGV[6] .. "lane:" .. worker
      rcall("RPUSH", lane, ARGV[1] .. "\\n" .. ARGV[2] .. "\\n" .. ARGV[5] .. "\\n" .. ARGV[4] .. "\\n" .. ARGV[3])
      rcall("PEXPIRE", lane, ARGV[7])
      return 2
    end
  end
end
local target, pausedOrMaxed = KEYS[1], false
if meta[1] then
  target, pausedOrMaxed = KEYS[2], true
elseif meta[2] and rcall("LLEN", KEYS[5]) >= tonumber(meta[2]) then
  pausedOrMaxed = true
end
rcall("LPUSH", target, ARGV[1])
if not pausedOrMaxed then rcall("ZADD", KEYS[7], 0, "0") end
rcall("XADD", KEYS[6], "MAXLEN", "~", maxEvents, "*", "event", "waiting", "jobId", ARGV[1])
return 1
`;

/**
 * How long a worker's lane outlives its last hand-off, in ms. A live worker
 * empties its lane at once, and the lane of a dead one is swept back to
 * `wait` by the live workers (handoff-lane.ts) about a second after; this
 * only reclaims a lane nobody swept (no live worker on the queue).
 */
const LANE_TTL_MS = 60_000;

/** The keys of one queue the script touches and its hand-off key base (the job hash is appended per job). */
interface QueueScriptKeys {
  keys: string[];
  handoffBase: string;
}

function queueKeysOf(queue: Queue, prefix: string): QueueScriptKeys {
  const names = ['wait', 'paused', 'meta', 'id', 'active', 'events', 'marker'] as const;
  const keys = bullKeysOf(queue, names);
  const handoff = handoffKeysOf(prefix, queue.name);
  return { keys: [...names.map((name) => keys[name]), handoff.idle], handoffBase: handoff.base };
}

/** Where {@link JobInserter.insert} put a job. */
export type InsertedAs = 'handed-off' | 'queued';

/**
 * Adds bus request jobs to BullMQ queues with {@link INSERT_JOB_LUA}.
 * Supported options: those `jobOptionsFor` produces (id, removal, attempts,
 * backoff); they are stored as `Queue.add` stores them.
 */
export class JobInserter {
  private readonly keysByQueue = new Map<Queue, QueueScriptKeys>();

  /**
   * @param redis - the connection the script runs on.
   * @param prefix - the BullMQ key prefix of the queues (for the hand-off keys).
   */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /**
   * Inserts job `opts.jobId` named `name` with `request` as its data, handed
   * straight to an idle worker slot when there is one.
   *
   * @returns `handed-off` (the job is active, in a worker's lane) or `queued`
   *   (in `wait`, or `paused` while the queue is paused).
   * @throws Error when the id is missing or already taken, or the Redis
   *   command fails (connection down: ioredis's error, fast).
   */
  async insert(queue: Queue, name: string, request: BusRequest, opts: JobsOptions): Promise<InsertedAs> {
    const jobId = opts.jobId;
    if (jobId === undefined) throw new Error('A bus job needs an id.');
    let keys = this.keysByQueue.get(queue);
    if (keys === undefined) {
      keys = queueKeysOf(queue, this.prefix);
      this.keysByQueue.set(queue, keys);
    }
    const jobKey = queue.toKey(jobId);
    const args = [
      jobId,
      name,
      JSON.stringify(request),
      JSON.stringify(opts),
      String(Date.now()),
      keys.handoffBase,
      String(LANE_TTL_MS),
    ];
    const inserted = await evalScript(this.redis, INSERT_JOB_LUA, keys.keys.length + 1, ...keys.keys, jobKey, ...args);
    if (inserted === 2) return 'handed-off';
    if (inserted === 1) return 'queued';
    throw new Error(`A job with id ${jobId} already exists in ${queue.name}.`);
  }
}
