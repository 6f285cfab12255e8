import { z } from 'zod';

/**
 * Named queues and their concurrency (036 enqueue: "put the run in its
 * queue … status 5 `queued` until a slot frees"; dagu-model §3 `queue`).
 *
 * `RUN_QUEUES` lists queues with their own limit, e.g.
 * `default:4,nightly:1`: at most that many runs of the queue are active
 * (running or waiting) at once, counted over every replica. A queue not
 * listed (a DAG's `queue:` or a request's `queue` may name any queue) gets
 * `RUN_QUEUE_CONCURRENCY`.
 */
export interface QueueLimits {
  /** Active runs allowed at once in `queue`. */
  limitOf(queue: string): number;
  /** The queues configured by name (for logs and docs). */
  readonly named: ReadonlyMap<string, number>;
}

const QUEUE_NAME = /^[-A-Za-z0-9_.]+$/;

/** One `name:limit` entry of `RUN_QUEUES`. */
const EntrySchema = z.tuple([
  z.string().regex(QUEUE_NAME, 'queue names use letters, digits, - _ .'),
  z.coerce.number().int().positive(),
]);

/**
 * Parses `RUN_QUEUES` (`name:limit` entries separated by commas; blanks
 * around entries ignored; empty = no named queue).
 *
 * @throws Error naming the bad entry (`nightly:0`, `x`, a repeated name)
 */
export function parseQueueList(text: string): Map<string, number> {
  const named = new Map<string, number>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const at = entry.lastIndexOf(':');
    const parsed = EntrySchema.safeParse(
      at < 0 ? [entry, ''] : [entry.slice(0, at).trim(), entry.slice(at + 1).trim()],
    );
    if (!parsed.success) throw new Error(`bad queue entry "${entry}" (expected name:limit with a positive limit)`);
    const [name, limit] = parsed.data;
    if (named.has(name)) throw new Error(`queue "${name}" is listed twice`);
    named.set(name, limit);
  }
  return named;
}

/** Builds the limits: the named queues, every other queue `fallback`. */
export function queueLimits(named: ReadonlyMap<string, number>, fallback: number): QueueLimits {
  return { named, limitOf: (queue) => named.get(queue) ?? fallback };
}
