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
 * How many times a job of `op` may run in all (CONTRIBUTING §6, "Retries
 * follow the error"): 1 for a mutation (`mutation: true`), whatever its
 * `attempts` says, since running a write again after a failure of unknown
 * effect could apply it twice; else the op's `attempts` (default 1).
 */
export function attemptsOf(op: Pick<OpDefinition, 'mutation' | 'attempts'>): number {
  return op.mutation ? 1 : Math.max(1, Math.floor(op.attempts ?? 1));
}

/**
 * BullMQ options of a request job: the caller's id, gone once completed (the
 * reply already travelled by pub/sub), the last 1000 failures kept — none
 * when the payload `carriesSecret` (a failed job keeps its data) — and
 * `attempts` from the op (default 1: no retry) with exponential backoff.
 */
export function jobOptionsFor(
  jobId: string,
  opAttempts: OpDefinition['attempts'],
  carriesSecret: OpDefinition['carriesSecret'] = false,
): JobsOptions {
  const attempts = Math.max(1, Math.floor(opAttempts ?? 1));
  return {
    jobId,
    removeOnComplete: true,
    removeOnFail: carriesSecret === true ? true : { count: KEEP_FAILED_JOBS },
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
