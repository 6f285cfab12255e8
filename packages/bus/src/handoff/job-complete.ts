import { type Redis } from 'ioredis';
import { evalScript } from '../redis-script';

/**
 * The bus's completion of a handed-off job that succeeded: one small Lua
 * script instead of BullMQ's `Job.moveToCompleted` plus a PUBLISH and a slot
 * return, so the worker makes one round trip per job after the handler, not
 * three, and its event loop is free again sooner (on a 2-core host that is
 * what the next request waits for).
 *
 * In order, atomically:
 * 1. PUBLISH the reply (Redis delivers it when the script ends, ~20 µs later),
 *    unless Redis's clock says the request's deadline has passed: the command
 *    may reach Redis late (sent while the connection was down, or re-sent
 *    after a reconnect), and a reply after the deadline is never sent;
 * 2. what BullMQ's `moveToFinished` does for a completed job with
 *    `removeOnComplete: true`, no parent, no de-duplication id and no
 *    metrics, which is every bus job: check and release the lock, take the
 *    job out of `active` and `stalled`, trim the event stream, delete the job's
 *    keys, add the `completed` event (and `drained` when nothing is left);
 * 3. give the slot back to `idle`.
 * Failures and jobs kept after completion go through BullMQ's own `Job`
 * methods instead (service-worker.ts). Parity with `moveToCompleted` is pinned
 * by handoff.integration.test.ts; re-run it on a BullMQ upgrade.
 *
 * KEYS: active, events, stalled, meta, wait, prioritized, idle, job hash.
 * ARGV: job id, lock token, reply channel ('' for none), reply message,
 *   slot owner ('' to keep the slot), return value (JSON; always "null" here),
 *   reply deadline (epoch ms).
 * Returns BullMQ's codes: 0, or -1 (no such job), -2 (no lock), -6 (lock held
 * by another token), -3 (not active); the reply and the slot are handled in
 * every case.
 */
const COMPLETE_JOB_LUA = `
local rcall = redis.call
local jobKey = KEYS[8]
if ARGV[3] ~= "" then
  local now = rcall("TIME")
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) < tonumber(ARGV[7]) then
    rcall("PUBLISH", ARGV[3], ARGV[4])
  end
end
if ARGV[5] ~= "" then rcall("RPUSH", KEYS[7], ARGV[5]) end
if rcall("EXISTS", jobKey) == 0 then return -1 end
local lockKey = jobKey .. ":lock"
local holder = rcall("GET", lockKey)
if holder ~= ARGV[2] then
  if holder then return -6 end
  return -2
end
rcall("DEL", lockKey)
rcall("SREM", KEYS[3], ARGV[1])
if rcall("LREM", KEYS[1], -1, ARGV[1]) < 1 then return -3 end
local maxEvents = rcall("HGET", KEYS[4], "opts.maxLenEvents")
if not maxEvents then
  maxEvents = 10000
  rcall("HSET", KEYS[4], "opts.maxLenEvents", maxEvents)
end
rcall("XTRIM", KEYS[2], "MAXLEN", "~", maxEvents)
rcall("DEL", jobKey, jobKey .. ":logs", jobKey .. ":dependencies", jobKey .. ":processed",
  jobKey .. ":failed", jobKey .. ":unsuccessful")
rcall("XADD", KEYS[2], "*", "event", "completed", "jobId", ARGV[1], "returnvalue", ARGV[6], "prev", "active")
if rcall("LLEN", KEYS[5]) == 0 and rcall("LLEN", KEYS[1]) == 0 and rcall("ZCARD", KEYS[6]) == 0 then
  rcall("XADD", KEYS[2], "*", "event", "drained")
end
return 0
`;

/** BullMQ's meaning of each code {@link JobCompleter.complete} can return. */
const COMPLETION_ERRORS: Readonly<Record<number, string>> = {
  [-1]: 'the job no longer exists',
  [-2]: 'the job lost its lock',
  [-3]: 'the job is not active',
  [-6]: 'the job is locked by another worker',
};

/** The keys of one queue the completion touches ({@link COMPLETE_JOB_LUA}'s KEYS but the job hash). */
export interface CompletionKeys {
  active: string;
  events: string;
  stalled: string;
  meta: string;
  wait: string;
  prioritized: string;
  /** The queue's hand-off `idle` list (`handoffKeysOf().idle`). */
  idle: string;
}

/** What to publish with the completion. */
export interface ReplyToSend {
  channel: string;
  message: string;
  /** Epoch ms after which the reply is not published. */
  deadline: number;
}

/** Completes handed-off bus jobs with {@link COMPLETE_JOB_LUA}. */
export class JobCompleter {
  private readonly keys: string[];

  /**
   * @param redis - the connection the script runs on.
   * @param keys - the queue's keys.
   */
  constructor(
    private readonly redis: Redis,
    keys: CompletionKeys,
  ) {
    this.keys = [keys.active, keys.events, keys.stalled, keys.meta, keys.wait, keys.prioritized, keys.idle];
  }

  /**
   * Publishes `reply`, completes job `jobId` held with `token` and removes
   * it, and lists a slot of `slotOwner` as free again.
   *
   * @param jobKey - the job hash key (`queue.toKey(jobId)`).
   * @param reply - published first while its deadline has not passed; `undefined` publishes nothing.
   * @param slotOwner - the worker id whose slot comes back; `undefined` keeps it.
   * @throws Error naming BullMQ's reason when the job could not be completed
   *   (the reply was still published and the slot returned), or the Redis
   *   command's error.
   */
  async complete(
    jobKey: string,
    jobId: string,
    token: string,
    reply: ReplyToSend | undefined,
    slotOwner: string | undefined,
  ): Promise<void> {
    // The processor returns nothing, which BullMQ records as the return value "null".
    const args = [
      jobId,
      token,
      reply?.channel ?? '',
      reply?.message ?? '',
      slotOwner ?? '',
      'null',
      String(reply?.deadline ?? 0),
    ];
    const code = await evalScript(this.redis, COMPLETE_JOB_LUA, this.keys.length + 1, ...this.keys, jobKey, ...args);
    if (code !== 0) {
      throw new Error(
        `Job ${jobId} could not be completed: ${COMPLETION_ERRORS[Number(code)] ?? `code ${String(code)}`}.`,
      );
    }
  }
}
