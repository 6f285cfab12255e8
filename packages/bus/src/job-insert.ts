import { createHash } from 'node:crypto';
import { type BusRequest } from '@dagu-mcp/contracts';
import { type JobsOptions, type Queue } from 'bullmq';
import { type Redis } from 'ioredis';

/**
 * The bus's job insertion: one small Lua script instead of `Queue.add`.
 *
 * Why: on the caller's critical path `Queue.add` costs ~25 µs of client CPU
 * (Job object, msgpack of the options, telemetry wrapper) and ~40 µs of Redis
 * time (its generic script handles parents, delays, priorities,
 * de-duplication, repeat). A bus request is always a plain, immediate,
 * un-prioritised job with a fresh id, so this script performs only the steps
 * `addStandardJob` performs for such a job, writing the same keys, fields and
 * events, so BullMQ's Worker, Queue getters, QueueEvents and stalled-job
 * recovery see a job indistinguishable from one `Queue.add` made. The parity
 * is pinned by job-insert.integration.test.ts; re-run it on a BullMQ upgrade.
 *
 * KEYS: wait, paused, meta, id, active, events, marker, job hash.
 * ARGV: job id, name, data (JSON), opts (JSON), timestamp (epoch ms).
 * Returns 1, or 0 when a job with that id already exists (nothing changed).
 */
const INSERT_JOB_LUA = `
local rcall = redis.call
if rcall("EXISTS", KEYS[8]) == 1 then return 0 end
rcall("INCR", KEYS[4])
local maxEvents = rcall("HGET", KEYS[3], "opts.maxLenEvents")
if not maxEvents then
  maxEvents = 10000
  rcall("HSET", KEYS[3], "opts.maxLenEvents", maxEvents)
end
rcall("HMSET", KEYS[8], "name", ARGV[2], "data", ARGV[3], "opts", ARGV[4],
  "timestamp", ARGV[5], "delay", 0, "priority", 0)
rcall("XADD", KEYS[6], "*", "event", "added", "jobId", ARGV[1], "name", ARGV[2])
local meta = rcall("HMGET", KEYS[3], "paused", "concurrency")
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
const INSERT_JOB_SHA = createHash('sha1').update(INSERT_JOB_LUA).digest('hex');

/** The keys of one queue the script touches, in its KEYS order (the job hash is appended per job). */
function queueKeysOf(queue: Queue): string[] {
  const { keys } = queue;
  return [keys.wait, keys.paused, keys.meta, keys.id, keys.active, keys.events, keys.marker].map((key) => {
    if (key === undefined) throw new Error(`BullMQ queue ${queue.name} lacks a key the bus needs.`);
    return key;
  });
}

/**
 * Adds bus request jobs to BullMQ queues with {@link INSERT_JOB_LUA}.
 * Supported options: those `jobOptionsFor` produces (id, removal, attempts,
 * backoff); they are stored as `Queue.add` stores them.
 */
export class JobInserter {
  private readonly keysByQueue = new Map<Queue, string[]>();

  constructor(private readonly redis: Redis) {}

  /**
   * Inserts job `opts.jobId` named `name` with `request` as its data.
   *
   * @throws Error when the id is missing or already taken, or the Redis
   *   command fails (connection down: ioredis's error, fast).
   */
  async insert(queue: Queue, name: string, request: BusRequest, opts: JobsOptions): Promise<void> {
    const jobId = opts.jobId;
    if (jobId === undefined) throw new Error('A bus job needs an id.');
    let keys = this.keysByQueue.get(queue);
    if (keys === undefined) {
      keys = queueKeysOf(queue);
      this.keysByQueue.set(queue, keys);
    }
    const jobKey = queue.toKey(jobId);
    const args = [jobId, name, JSON.stringify(request), JSON.stringify(opts), String(Date.now())];
    const inserted = await this.run(keys, jobKey, args);
    if (inserted !== 1) throw new Error(`A job with id ${jobId} already exists in ${queue.name}.`);
  }

  private async run(keys: string[], jobKey: string, args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(INSERT_JOB_SHA, keys.length + 1, ...keys, jobKey, ...args);
    } catch (error) {
      // First use on this Redis (or after a restart wiped its script cache).
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.redis.eval(INSERT_JOB_LUA, keys.length + 1, ...keys, jobKey, ...args);
    }
  }
}
