/**
 * The names of the Redis keys the hand-off writes: its own (`handoff:*`
 * under the queue) and BullMQ's, read from a `Queue` or `Worker` so that a
 * BullMQ upgrade that renames one fails loudly (README.md, "Upgrade checklist").
 */

/**
 * Keys of a queue's direct hand-off (handoff/handoff-lane.ts), all under
 * `${prefix}:${queue}:handoff:` (job ids are UUIDs, so they never clash):
 * - `idle`: a list with one entry (the worker id) per free slot of a live worker;
 * - `alive:<worker>`: the worker's lock duration in ms, expiring unless refreshed;
 * - `lane:<worker>`: the jobs handed to that worker, oldest first;
 * - `workers`: a set of the worker ids that listed slots (swept when dead).
 *
 * @param prefix - the BullMQ key prefix (`BUS_PREFIX`).
 * @param queueName - the BullMQ queue name (`queueNameOf`).
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
export function bullKeysOf<K extends string>(
  queue: { name: string; keys: Record<string, string | undefined> },
  names: readonly K[],
): Record<K, string> {
  const found: Partial<Record<K, string>> = {};
  for (const name of names) {
    const key = queue.keys[name];
    if (key === undefined) throw new Error(`BullMQ queue ${queue.name} lacks the "${name}" key the bus needs.`);
    found[name] = key;
  }
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the loop above set every name or threw
  return found as Record<K, string>;
}

/** The lock token of a handed-off job: the worker that holds it and the job. */
export function handoffTokenOf(workerId: string, jobId: string): string {
  return `${workerId}:${jobId}`;
}
