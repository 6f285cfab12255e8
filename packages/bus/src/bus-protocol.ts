import {
  QUEUE_NAMES,
  ReplyMessageSchema,
  type BusReply,
  type OpDefinition,
  type ReplyMessage,
  type ServiceName,
} from '@dagu-mcp/contracts';
import { type JobsOptions } from 'bullmq';

/**
 * The wire protocol of the bus, shared by BusClient and ServiceWorker:
 * - a request is a BullMQ job named after the op, whose data is a `BusRequest`
 *   and whose id is a random UUID chosen by the caller;
 * - the reply is PUBLISHed as `ReplyMessage` JSON (`{id, reply}`) on the
 *   caller's own channel `${prefix}:reply:${clientId}` (the request's
 *   `replyTo`), not read back from the job, so it costs one hop.
 */

/** The default BullMQ key prefix of the bus (`BUS_PREFIX`). */
export const DEFAULT_BUS_PREFIX = 'dagu';

/** The default caller deadline, in ms, when neither the call nor the op sets one. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** How many failed jobs a queue keeps for inspection (older ones are trimmed). */
export const KEEP_FAILED_JOBS = 1000;

/** Delay before the first retry of a transient failure, in ms (then doubled per attempt). */
export const RETRY_BACKOFF_MS = 100;

/** The BullMQ queue name of a service; its keys are `${prefix}:${queue}:…`. */
export function queueNameOf(service: ServiceName): string {
  return QUEUE_NAMES[service];
}

/**
 * Keys of a queue's direct hand-off (handoff-lane.ts), all under
 * `${prefix}:${queue}:handoff:` (job ids are UUIDs, so they never clash):
 * - `idle`: a list with one entry (the worker id) per free slot of a live worker;
 * - `alive:<worker>`: the worker's lock duration in ms, expiring unless refreshed;
 * - `lane:<worker>`: the jobs handed to that worker, oldest first;
 * - `workers`: a set of the worker ids that listed slots (swept when dead).
 *
 * @param prefix - the BullMQ key prefix (`BUS_PREFIX`).
 * @param queueName - the BullMQ queue name ({@link queueNameOf}).
 */
export function handoffKeysOf(prefix: string, queueName: string): HandoffKeys {
  const base = `${prefix}:${queueName}:handoff:`;
  return {
    base,
    idle: `${base}idle`,
    workers: `${base}workers`,
    aliveOf: (workerId) => `${base}alive:${workerId}`,
    laneOf: (workerId) => `${base}lane:${workerId}`,
  };
}

/** See {@link handoffKeysOf}. */
export interface HandoffKeys {
  base: string;
  idle: string;
  workers: string;
  aliveOf: (workerId: string) => string;
  laneOf: (workerId: string) => string;
}

/**
 * The named BullMQ keys of a queue (a `Queue` or a `Worker`), each required.
 *
 * @param queue - anything with BullMQ's `name` and `keys` map.
 * @param names - key names (`wait`, `active`, …).
 * @returns the keys by name.
 * @throws Error naming the queue when BullMQ has no such key (a BullMQ upgrade renamed it).
 */
export function bullKeysOf<K extends string>(queue: { name: string; keys: Record<string, string | undefined> }, names: readonly K[]): Record<K, string> {
  const found: Partial<Record<K, string>> = {};
  for (const name of names) {
    const key = queue.keys[name];
    if (key === undefined) throw new Error(`BullMQ queue ${queue.name} lacks the "${name}" key the bus needs.`);
    found[name] = key;
  }
  return found as Record<K, string>;
}

/** The lock token of a handed-off job: the worker that holds it and the job. */
export function handoffTokenOf(workerId: string, jobId: string): string {
  return `${workerId}:${jobId}`;
}

/** The pub/sub channel a BusClient listens on for its replies. */
export function replyChannelOf(prefix: string, clientId: string): string {
  return `${prefix}:reply:${clientId}`;
}

/**
 * The caller's timeout for one call, in ms: the call's own, else the op's
 * `timeoutMs`, else the client default.
 *
 * @throws RangeError when the result is not a positive finite number.
 */
export function resolveTimeoutMs(
  callTimeoutMs: number | undefined,
  opTimeoutMs: number | undefined,
  defaultTimeoutMs: number,
): number {
  const timeoutMs = callTimeoutMs ?? opTimeoutMs ?? defaultTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}.`);
  }
  return timeoutMs;
}

/**
 * BullMQ options of a request job: the caller's id, gone once completed (the
 * reply already travelled by pub/sub), the last 1000 failures kept, and
 * `attempts` from the op (default 1: no retry) with exponential backoff.
 */
export function jobOptionsFor(jobId: string, opAttempts: OpDefinition['attempts']): JobsOptions {
  const attempts = Math.max(1, Math.floor(opAttempts ?? 1));
  return {
    jobId,
    removeOnComplete: true,
    removeOnFail: { count: KEEP_FAILED_JOBS },
    attempts,
    ...(attempts > 1 ? { backoff: { type: 'exponential', delay: RETRY_BACKOFF_MS } } : {}),
  };
}

/** Serialises a reply for the reply channel. */
export function encodeReplyMessage(id: string, reply: BusReply): string {
  const message: ReplyMessage = { id, reply };
  return JSON.stringify(message);
}

/**
 * Parses a reply-channel message; `undefined` when it is not JSON or not a
 * `ReplyMessage` (logged by the caller, never thrown: one bad publisher must
 * not break the subscription).
 */
export function decodeReplyMessage(raw: string): ReplyMessage | undefined {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = ReplyMessageSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
